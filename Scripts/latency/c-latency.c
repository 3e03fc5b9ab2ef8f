#include <gps.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
/* Stamps CLOCK_MONOTONIC as gps_read() returns each TPV fix, until argv[2] fixes or the feeder closes; writes
 * "fix-time-in-ms stamp-in-ns" for each into argv[3]. */
int main(int argc, char **argv) {
    if (argc != 4) return 64;
    long want = atol(argv[2]), seen = 0;
    long long *keys = calloc((size_t)want, sizeof *keys), *stamps = calloc((size_t)want, sizeof *stamps);
    struct gps_data_t *d = calloc(1, sizeof *d);
    if (gps_open("127.0.0.1", argv[1], d) != 0) return 2;
    gps_stream(d, WATCH_ENABLE | WATCH_JSON, NULL);
    while (seen < want && gps_waiting(d, 30000000)) {
        d->set = 0;
        if (gps_read(d, NULL, 0) < 0) break;   /* the feeder closed */
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (!(d->set & MODE_SET) || d->fix.mode < 2 || !isfinite(d->fix.latitude)) continue;
        keys[seen] = (long long)d->fix.time.tv_sec * 1000 + (d->fix.time.tv_nsec + 500000) / 1000000;
        stamps[seen++] = (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
    }
    gps_close(d);
    FILE *out = fopen(argv[3], "w");
    if (out == NULL) return 1;
    for (long i = 0; i < seen; i++) fprintf(out, "%lld %lld\n", keys[i], stamps[i]);
    return fclose(out) == 0 ? 0 : 1;
}
