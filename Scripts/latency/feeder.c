#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
/* A loopback gpsd for one client: VERSION on connect; ?WATCH answered with DEVICES and WATCH, ?POLL with a POLL
 * holding the last TPV written; then, after the settle time, TPVs of a 3D fix (each with its own time, a step of
 * 1/rate s, or 1 ms flat out) at `rate` a second, or back to back with blocking writes when the rate is 0.
 * CLOCK_MONOTONIC is stamped right before each TPV's write(); the stamps stay in memory until the client closes
 * (or `linger` seconds pass), then "time-in-ms stamp-in-ns" of the counted TPVs goes to the stamps file.
 * Writes `warmup` TPVs before the counted ones and one after them, uncounted: a consumer that passes a fix on
 * only when the next one arrives gets every counted fix the same way.
 * usage: feeder RATE COUNT WARMUP SETTLE-MS LINGER-S STAMPS-FILE; prints the port it listens on. */
static int client = -1;
static const char *last_tpv = NULL; static size_t last_tpv_length = 0;

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void send_all(const char *text, size_t length) {
    while (length > 0) {
        ssize_t sent = send(client, text, length, MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR) continue;
        if (sent <= 0) return;   /* the client has gone: what is left is counted as never received */
        text += sent, length -= (size_t)sent;
    }
}

static void iso_time(long long ms, char *out, size_t size) {
    time_t seconds = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&seconds, &tm);
    size_t n = strftime(out, size, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out + n, size - n, ".%03dZ", (int)(ms % 1000));
}

/* Answers the commands that have arrived (waiting up to `timeout_ms` for some); 0 once the client has closed. */
static int serve_commands(int timeout_ms, int *watching) {
    static char pending[4096]; static size_t used = 0;
    struct pollfd p = { client, POLLIN, 0 };
    int ready = poll(&p, 1, timeout_ms);
    if (ready <= 0) return 1;
    ssize_t got = recv(client, pending + used, sizeof pending - 1 - used, MSG_DONTWAIT);
    if (got == 0) return 0;
    if (got < 0) return errno == EAGAIN || errno == EINTR;
    used += (size_t)got;
    pending[used] = 0;
    char *end;
    while ((end = strchr(pending, ';')) != NULL) {   /* gpsd's commands end with ';' (and a newline) */
        char now[40];
        struct timespec wall;
        clock_gettime(CLOCK_REALTIME, &wall);
        iso_time((long long)wall.tv_sec * 1000 + wall.tv_nsec / 1000000, now, sizeof now);
        if (strncmp(pending, "?WATCH", 6) == 0) {
            char reply[1024];
            int n = snprintf(reply, sizeof reply,
                "{\"class\":\"DEVICES\",\"devices\":[{\"class\":\"DEVICE\",\"path\":\"/dev/ttyLAT0\","
                "\"driver\":\"NMEA0183\",\"activated\":\"%s\",\"flags\":1,\"native\":0,\"bps\":9600,"
                "\"parity\":\"N\",\"stopbits\":1,\"cycle\":1.00}]}\n"
                "{\"class\":\"WATCH\",\"enable\":true,\"json\":true,\"nmea\":false,\"raw\":0,\"scaled\":false,"
                "\"timing\":false,\"split24\":false,\"pps\":false}\n", now);
            send_all(reply, (size_t)n);
            *watching = 1;
        } else if (strncmp(pending, "?POLL", 5) == 0) {
            char reply[2048];
            int held = last_tpv ? (int)last_tpv_length - 1 : 0;   /* without its newline */
            int n = snprintf(reply, sizeof reply, "{\"class\":\"POLL\",\"time\":\"%s\",\"active\":1,\"tpv\":[%.*s],"
                             "\"sky\":[]}\n", now, held, last_tpv ? last_tpv : "");
            send_all(reply, (size_t)n);
        }
        end++;
        while (*end == '\n' || *end == '\r') end++;
        used -= (size_t)(end - pending);
        memmove(pending, end, used + 1);
    }
    if (used == sizeof pending - 1) used = 0;   /* no command is that long */
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 7) { fprintf(stderr, "usage: feeder RATE COUNT WARMUP SETTLE-MS LINGER-S STAMPS-FILE\n"); return 64; }
    double rate = atof(argv[1]);
    long count = atol(argv[2]), warmup = atol(argv[3]), settle_ms = atol(argv[4]), linger_s = atol(argv[5]);
    long total = warmup + count + 1;
    long long step_ms = rate > 0 ? llround(1000.0 / rate) : 1;
    if (step_ms < 1) step_ms = 1;

    /* Every TPV is written out before the first is sent, so sending one is a stamp and a write(). */
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    long long first_ms = (long long)wall.tv_sec * 1000;
    char **lines = calloc((size_t)total, sizeof *lines);
    size_t *lengths = calloc((size_t)total, sizeof *lengths);
    long long *stamps = calloc((size_t)total, sizeof *stamps);
    double lat = 52.5, lon = 13.4, metres_per_degree_lon = 111320.0 * cos(52.5 * M_PI / 180.0);
    for (long i = 0; i < total; i++) {
        char time_text[40], line[512];
        iso_time(first_ms + i * step_ms, time_text, sizeof time_text);
        double east = 10.0 * (double)(i * step_ms) / 1000.0;   /* 10 m/s due east */
        int n = snprintf(line, sizeof line,
            "{\"class\":\"TPV\",\"device\":\"/dev/ttyLAT0\",\"mode\":3,\"time\":\"%s\",\"ept\":0.005,"
            "\"lat\":%.9f,\"lon\":%.9f,\"altHAE\":84.000,\"altMSL\":40.000,\"alt\":40.000,\"epx\":3.000,"
            "\"epy\":4.000,\"epv\":9.500,\"track\":90.0000,\"speed\":10.000,\"climb\":0.000,\"eps\":0.50,"
            "\"eph\":6.50}\n", time_text, lat, lon + east / metres_per_degree_lon);
        lines[i] = strdup(line), lengths[i] = (size_t)n;
    }

    int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in address = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t size = sizeof address;
    if (listener < 0 || bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 4) != 0
        || getsockname(listener, (struct sockaddr *)&address, &size) != 0) { perror("feeder"); return 1; }
    printf("%d\n", ntohs(address.sin_port));
    fflush(stdout);
    client = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
    if (client < 0) { perror("feeder: accept"); return 1; }
    int one = 1;   /* no Nagle: each TPV leaves as it is written, as a gpsd's does between receiver cycles */
    setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    static const char version[] =
        "{\"class\":\"VERSION\",\"release\":\"3.22\",\"rev\":\"3.22\",\"proto_major\":3,\"proto_minor\":14}\n";
    send_all(version, sizeof version - 1);

    int watching = 0, open = 1;
    long long deadline = now_ns() + 30000000000LL;
    while (open && !watching && now_ns() < deadline) open = serve_commands(100, &watching);
    if (!watching) { fprintf(stderr, "feeder: no ?WATCH from the client\n"); return 1; }
    for (long long until = now_ns() + settle_ms * 1000000LL; open && now_ns() < until;)
        open = serve_commands((int)((until - now_ns()) / 1000000) + 1, &watching);

    long long period_ns = rate > 0 ? llround(1e9 / rate) : 0, start = now_ns();
    for (long i = 0; open && i < total; i++) {
        if (period_ns > 0) {
            long long due = start + i * period_ns;
            struct timespec t = { (time_t)(due / 1000000000LL), (long)(due % 1000000000LL) };
            open = serve_commands(0, &watching);
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR) {}
        } else if ((i & 63) == 0) {
            open = serve_commands(0, &watching);
        }
        stamps[i] = now_ns();
        send_all(lines[i], lengths[i]);
        last_tpv = lines[i], last_tpv_length = lengths[i];
    }
    for (long long until = now_ns() + linger_s * 1000000000LL; open && now_ns() < until;)
        open = serve_commands(100, &watching);
    close(client);

    FILE *out = fopen(argv[6], "w");
    if (out == NULL) { perror("feeder: stamps file"); return 1; }
    for (long i = warmup; i < warmup + count; i++)
        if (stamps[i] != 0) fprintf(out, "%lld %lld\n", first_ms + i * step_ms, stamps[i]);
    return fclose(out) == 0 ? 0 : 1;
}
