#include <gps.h>
#include <stdlib.h>
#include <string.h>

/// gps_unpack of one line into a zeroed, heap-allocated gps_data_t: what libgps does for each report, alone.
static inline int clibgps_unpack(char *line, struct gps_data_t *data) {
    return gps_unpack(line, data);
}

static inline struct gps_data_t *clibgps_new(void) { return calloc(1, sizeof(struct gps_data_t)); }
