// whereami: the command lives in WhereAmICore, where its tests and fuzz targets reach it too.
import WhereAmICore

await WhereAmI.runAsMain()
