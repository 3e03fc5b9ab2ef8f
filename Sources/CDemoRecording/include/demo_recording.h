#ifndef GPSDLOCATION_DEMO_RECORDING_H
#define GPSDLOCATION_DEMO_RECORDING_H

#include <stddef.h>

/// whereami's demo recording (Sources/WhereAmICore/Resources/drive.gpsd.json), built into the program: its bytes,
/// `*count` of them.
const unsigned char *gpsdlocation_demo_recording(size_t *count);

#endif
