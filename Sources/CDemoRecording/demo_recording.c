// whereami's demo recording, built into the program by the C compiler's #embed: a copied binary runs --demo with
// nothing beside it. (SwiftPM's embedInCode spelled the 226 KB out as a Swift array literal, which took minutes
// to compile in every debug build.)
#include "demo_recording.h"

#pragma clang diagnostic ignored "-Wc23-extensions"

static const unsigned char recording[] = {
#embed "../WhereAmICore/Resources/drive.gpsd.json"
};

const unsigned char *gpsdlocation_demo_recording(size_t *count) {
    *count = sizeof recording;
    return recording;
}
