#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
/* Reads standard input (whereami's), stamping CLOCK_MONOTONIC as each read(2) returns; a line gets the stamp of
 * the read that completed it and is known by its "timestamp" (ms). At the end of input writes
 * "fix-time-in-ms stamp-in-ns" for each line that has one into argv[1]. */
static long long fix_time_ms(const char *line) {
    const char *t = strstr(line, "\"timestamp\":\"");
    struct tm tm = { 0 };
    if (t == NULL || strptime(t + 13, "%Y-%m-%dT%H:%M:%S", &tm) == NULL) return -1;
    long long ms = (long long)timegm(&tm) * 1000;
    const char *fraction = strchr(t + 13, '.');
    if (fraction != NULL && fraction - t < 40) {
        long scale = 100;
        for (const char *c = fraction + 1; *c >= '0' && *c <= '9' && scale > 0; c++, scale /= 10)
            ms += (*c - '0') * scale;
    }
    return ms;
}

int main(int argc, char **argv) {
    if (argc != 2) return 64;
    size_t capacity = 1 << 16, count = 0, used = 0;
    long long *keys = malloc(capacity * sizeof *keys), *stamps = malloc(capacity * sizeof *stamps);
    static char buffer[1 << 16];
    for (;;) {
        ssize_t got = read(0, buffer + used, sizeof buffer - 1 - used);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (got <= 0) break;
        used += (size_t)got;
        buffer[used] = 0;
        char *line = buffer, *end;
        while ((end = strchr(line, '\n')) != NULL) {
            *end = 0;
            long long key = fix_time_ms(line);
            if (key >= 0) {
                if (count == capacity) {
                    capacity *= 2;
                    keys = realloc(keys, capacity * sizeof *keys), stamps = realloc(stamps, capacity * sizeof *stamps);
                }
                keys[count] = key, stamps[count++] = (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
            }
            line = end + 1;
        }
        used -= (size_t)(line - buffer);
        memmove(buffer, line, used);
        if (used == sizeof buffer - 1) used = 0;   /* no line is that long */
    }
    FILE *out = fopen(argv[1], "w");
    if (out == NULL) return 1;
    for (size_t i = 0; i < count; i++) fprintf(out, "%lld %lld\n", keys[i], stamps[i]);
    return fclose(out) == 0 ? 0 : 1;
}
