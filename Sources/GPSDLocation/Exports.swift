// What users of GPSDLocation see of the layer below: its values and errors (Location, LocationError, GPSDServer,
// ReconnectPolicy, …), so that `import GPSDLocation` is the one import a program needs.
@_exported public import GPSDCore
