// The only C that GPSDLocation sees of libgps.
//
// GPSDLocation uses libgps to parse gpsd's reports (`gps_unpack`); it opens its own socket to gpsd. Every
// difference between libgps API versions (GPSD_API_MAJOR_VERSION 9 to 16) is handled here, behind preprocessor
// guards, because Swift's `#if` cannot see C macros. Swift code never reads `struct gps_data_t` directly: it
// asks the shim to copy one report into a plain `cgps_report`.
#ifndef CGPS_SHIM_H
#define CGPS_SHIM_H

#include <gps.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if GPSD_API_MAJOR_VERSION < 9
#error "GPSDLocation needs libgps API 9 (gpsd 3.20) or newer"
#endif

// MARK: - Fix status values

// gpsd 3.23.1 renamed STATUS_NO_FIX/STATUS_FIX/STATUS_DGPS_FIX to STATUS_UNK/STATUS_GPS/STATUS_DGPS without
// an API bump; the numbers stayed the same. These names are stable for Swift.
#define CGPS_STATUS_UNKNOWN 0
#define CGPS_STATUS_GPS 1
#define CGPS_STATUS_DGPS 2
#define CGPS_STATUS_RTK_FIXED 3
#define CGPS_STATUS_RTK_FLOAT 4
#define CGPS_STATUS_DR 5
#define CGPS_STATUS_GNSSDR 6
#define CGPS_STATUS_TIME 7
#define CGPS_STATUS_SIMULATED 8
#define CGPS_STATUS_PPS 9

// MARK: - Session lifetime

/// A zeroed `gps_data_t` on the heap. One per session; never copied (it holds a private pointer).
static inline struct gps_data_t *cgps_alloc(void) {
    return (struct gps_data_t *)calloc(1, sizeof(struct gps_data_t));
}

static inline void cgps_free(struct gps_data_t *data) { free(data); }

// MARK: - Reports

/// The class of one gpsd JSON report.
typedef enum {
    CGPS_CLASS_OTHER = 0,
    CGPS_CLASS_TPV,
    CGPS_CLASS_SKY,
    CGPS_CLASS_VERSION,
    CGPS_CLASS_DEVICES,
    CGPS_CLASS_DEVICE,
    CGPS_CLASS_WATCH,
    CGPS_CLASS_ERROR,
    CGPS_CLASS_POLL,
    CGPS_CLASS_GST,
    CGPS_CLASS_ATT,
} cgps_class;

/// What Swift needs of one report, as plain values. NaN marks a value gpsd did not send; a value it sent is
/// passed as libgps parsed it (possibly infinite or absurd: Swift judges it).
typedef struct {
    cgps_class report_class;
    int mode;
    int status;
    bool has_time;
    int64_t time_sec;
    int64_t time_nsec;
    bool has_position;
    double latitude, longitude;
    double alt_msl, alt_hae;
    double eph, epv;
    double epx, epy;
    double speed, eps;
    double track, epd;
    double climb, epc;
    double lat_deviation, lon_deviation, alt_deviation;  // GST: 1-sigma errors in metres
    double base_east, base_north, base_up, base_length, base_course;  // RTK baseline (API 13+), else NaN
    double magnetic_var;  // TPV: gpsd's magnetic variation (`magvar`), degrees, east positive
    double heading, magnetic_heading, pitch, roll;  // ATT: degrees (`mheading` from gpsd 3.25 on, else NaN)
    int satellites_used, satellites_visible;
    double hdop, vdop, pdop, tdop, gdop, xdop, ydop;  // SKY: dilution of precision, NaN if not sent
    int device_count;
    bool device_active;
    char device[128];
    char message[256];
} cgps_report;

/// The value of `"class":"…"` in one JSON line, without parsing the rest.
static inline cgps_class cgps_classify(const char *json) {
    const char *key = strstr(json, "\"class\":\"");
    if (key == NULL) return CGPS_CLASS_OTHER;
    const char *name = key + 9;
    static const struct { const char *name; cgps_class value; } table[] = {
        {"TPV\"", CGPS_CLASS_TPV}, {"SKY\"", CGPS_CLASS_SKY}, {"VERSION\"", CGPS_CLASS_VERSION},
        {"DEVICES\"", CGPS_CLASS_DEVICES}, {"DEVICE\"", CGPS_CLASS_DEVICE}, {"WATCH\"", CGPS_CLASS_WATCH},
        {"ERROR\"", CGPS_CLASS_ERROR}, {"POLL\"", CGPS_CLASS_POLL}, {"GST\"", CGPS_CLASS_GST},
        {"ATT\"", CGPS_CLASS_ATT},
    };
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        if (strncmp(name, table[i].name, strlen(table[i].name)) == 0) return table[i].value;
    }
    return CGPS_CLASS_OTHER;
}

static inline int cgps_fix_status(const struct gps_data_t *data) {
#if GPSD_API_MAJOR_VERSION >= 10
    return data->fix.status;  // moved into gps_fix_t in API 10
#else
    return data->status;
#endif
}


/// The libgps API this package was built against (`GPSD_API_MAJOR_VERSION`).
static inline int cgps_api_major_version(void) { return GPSD_API_MAJOR_VERSION; }

/// The RTK baseline of a TPV (gpsd 3.23+, API 13: `baseE`, `baseN`, `baseU`, `baseL`, `baseC`); NaN on an older
/// libgps, which has no such fields. libgps parses each TPV's baseline with NaN defaults, like the error
/// estimates, so a value that is not NaN is a value gpsd sent.
static inline void cgps_copy_baseline(const struct gps_fix_t *fix, cgps_report *report) {
#if GPSD_API_MAJOR_VERSION >= 13
    report->base_east = fix->base.east;
    report->base_north = fix->base.north;
    report->base_up = fix->base.up;
    report->base_length = fix->base.length;
    report->base_course = fix->base.course;
#else
    (void)fix;
    report->base_east = report->base_north = report->base_up = NAN;
    report->base_length = report->base_course = NAN;
#endif
}

/// Whether this libgps reads an ATT's magnetic heading (`mheading`): gpsd 3.25 and later.
static inline bool cgps_reads_magnetic_heading(void) {
#if GPSD_API_MAJOR_VERSION > 14 || (GPSD_API_MAJOR_VERSION == 14 && defined(WATCH_READONLY))
    return true;
#else
    return false;
#endif
}

/// The attitude of an ATT report: true heading, magnetic heading, pitch and roll, NaN where gpsd sent none
/// (libgps parses each ATT with NaN defaults) or libgps did not read the ATT, and its time if it had one. `mheading` came with gpsd 3.25
/// without an API bump (3.24 and 3.25 are both API 14): `WATCH_READONLY`, new in the same release's gps.h,
/// tells them apart.
static inline void cgps_copy_attitude(const struct gps_data_t *data, cgps_report *report) {
    strncpy(report->device, data->dev.path, sizeof(report->device) - 1);
    if (!(data->set & ATTITUDE_SET)) {
        // libgps refused the ATT part-way (3.22 stops at a `time` that is a number) yet returns 0: none of it.
        report->heading = report->magnetic_heading = report->pitch = report->roll = NAN;
        return;
    }
    const struct attitude_t *attitude = &data->attitude;
    report->has_time = attitude->mtime.tv_sec != 0;
    report->time_sec = (int64_t)attitude->mtime.tv_sec;
    report->time_nsec = (int64_t)attitude->mtime.tv_nsec;
    report->heading = attitude->heading;
#if GPSD_API_MAJOR_VERSION > 14 || (GPSD_API_MAJOR_VERSION == 14 && defined(WATCH_READONLY))
    report->magnetic_heading = attitude->mheading;
#else
    report->magnetic_heading = NAN;
#endif
    report->pitch = attitude->pitch;
    report->roll = attitude->roll;
}

/// Parses one gpsd JSON report with libgps (`gps_unpack`) into `data`, then copies it into `report`.
///
/// `data->set` is cleared first: other report classes only add bits to it, so a stale LATLON_SET would make
/// a SKY report look like a fix. `json` must be NUL-terminated and writable (libgps may modify it).
/// Returns `gps_unpack`'s result: 0 on success, negative on a malformed report.
static inline int cgps_unpack(char *json, struct gps_data_t *data, cgps_report *report) {
    memset(report, 0, sizeof(*report));
    report->report_class = cgps_classify(json);
    data->set = 0;
    data->fix.mode = MODE_NOT_SEEN;
    if (report->report_class == CGPS_CLASS_SKY) {
        // From API 14 the satellites listed are counted from here (below): none may be left from the last SKY.
        memset(data->skyview, 0, sizeof(data->skyview));
        data->satellites_visible = data->satellites_used = 0;
    }
    int result = gps_unpack(json, data);
    if (result < 0) return result;
    switch (report->report_class) {
    case CGPS_CLASS_TPV: {
        const struct gps_fix_t *fix = &data->fix;
        report->mode = (data->set & MODE_SET) ? fix->mode : MODE_NOT_SEEN;
        report->status = (data->set & STATUS_SET) ? cgps_fix_status(data) : CGPS_STATUS_UNKNOWN;
        report->has_time = (data->set & TIME_SET) != 0 && fix->time.tv_sec != 0;
        report->time_sec = (int64_t)fix->time.tv_sec;
        report->time_nsec = (int64_t)fix->time.tv_nsec;
        report->has_position = (data->set & LATLON_SET) != 0;
        report->latitude = report->has_position ? fix->latitude : NAN;
        report->longitude = report->has_position ? fix->longitude : NAN;
        bool altitude = (data->set & ALTITUDE_SET) != 0;
        report->alt_msl = altitude ? fix->altMSL : NAN;
        report->alt_hae = altitude ? fix->altHAE : NAN;
        // The error estimates' *_SET bits are unreliable (libgps 3.22 sets HERR_SET only when epx and epy
        // are both present, though it fills eph either way). Every TPV is parsed afresh with NaN defaults,
        // so a value that is not NaN is a value gpsd sent.
        report->eph = fix->eph;
        report->epv = fix->epv;
        report->epx = fix->epx;
        report->epy = fix->epy;
        report->speed = (data->set & SPEED_SET) ? fix->speed : NAN;
        report->eps = fix->eps;
        report->track = (data->set & TRACK_SET) ? fix->track : NAN;
        report->epd = fix->epd;
        report->climb = (data->set & CLIMB_SET) ? fix->climb : NAN;
        report->epc = fix->epc;
        report->magnetic_var = fix->magnetic_var;
        cgps_copy_baseline(fix, report);
        strncpy(report->device, data->dev.path, sizeof(report->device) - 1);
        break;
    }
    case CGPS_CLASS_SKY: {
        // Every libgps (API 9 to 16) refuses a list longer than its skyview (MAXCHANNELS: cgps_skyview_capacity())
        // part-way: json_read_array fills the skyview, then fails with JSON_ERR_SUBTOOLONG, json_sky_read returns
        // before counting, gps_unpack still returns 0. The skyview then holds the first MAXCHANNELS satellites and
        // the counts are what was zeroed above (from API 14, uSat if it came before the list). Swift counts such a
        // list from the JSON itself (ReportDecoder).
#if GPSD_API_MAJOR_VERSION >= 14
        // libgps 3.25+ counts the list only for a SKY with nSat, which gpsd writes from 3.23 on; a SKY without it
        // (from an older gpsd, or a recording of one), or a list too long, leaves the counts 0 (uSat, if sent)
        // and does not mark the satellites as set, though it fills the list: count the list then, which
        // replaces uSat as libgps's own count does.
        if (!(data->set & SATELLITE_SET)) {
            int listed = 0, listed_used = 0;
            for (int i = 0; i < MAXCHANNELS && data->skyview[i].PRN != 0; i++) {
                listed++;
                if (data->skyview[i].used) listed_used++;
            }
            if (listed > 0) {
                data->satellites_visible = listed;
                data->satellites_used = listed_used;
            }
        }
#endif
        report->satellites_visible = data->satellites_visible;
        int used = 0;
        for (int i = 0; i < data->satellites_visible && i < MAXCHANNELS; i++) {
            if (data->skyview[i].used) used++;
        }
        report->satellites_used = data->satellites_used > used ? data->satellites_used : used;
        report->has_time = data->skyview_time.tv_sec != 0;
        report->time_sec = (int64_t)data->skyview_time.tv_sec;
        report->time_nsec = (int64_t)data->skyview_time.tv_nsec;
        report->hdop = data->dop.hdop;
        report->vdop = data->dop.vdop;
        report->pdop = data->dop.pdop;
        report->tdop = data->dop.tdop;
        report->gdop = data->dop.gdop;
        report->xdop = data->dop.xdop;
        report->ydop = data->dop.ydop;
        strncpy(report->device, data->dev.path, sizeof(report->device) - 1);
        break;
    }
    case CGPS_CLASS_GST: {
        // A pseudorange noise report (NMEA GST, or a receiver's binary equivalent): 1-sigma errors. libgps
        // parses it into the report union; fields gpsd did not send stay NaN.
        const struct gst_t *gst = &data->gst;
        report->has_time = gst->utctime.tv_sec != 0;
        report->time_sec = (int64_t)gst->utctime.tv_sec;
        report->time_nsec = (int64_t)gst->utctime.tv_nsec;
        report->lat_deviation = gst->lat_err_deviation;
        report->lon_deviation = gst->lon_err_deviation;
        report->alt_deviation = gst->alt_err_deviation;
        strncpy(report->device, data->dev.path, sizeof(report->device) - 1);
        break;
    }
    case CGPS_CLASS_ATT:
        cgps_copy_attitude(data, report);
        break;
    case CGPS_CLASS_DEVICES:
        report->device_count = data->devices.ndevices;
        break;
    case CGPS_CLASS_DEVICE:
        // gpsd sends "activated" with the time a receiver was opened, and 0 when it has closed it.
        strncpy(report->device, data->dev.path, sizeof(report->device) - 1);
        report->device_active = data->dev.activated.tv_sec != 0;
        break;
    case CGPS_CLASS_ERROR:
        strncpy(report->message, data->error, sizeof(report->message) - 1);
        break;
    case CGPS_CLASS_VERSION:
        strncpy(report->message, data->version.release, sizeof(report->message) - 1);
        break;
    default:
        break;
    }
    return result;
}

/// One satellite of a SKY's list, as plain values. NaN marks a value gpsd did not send.
typedef struct {
    int prn;
    bool has_identity;  // gnssid and svid were sent (libgps leaves svid 0 otherwise: gps.h says to ignore both)
    int gnssid, svid;
    int health;         // 0 unknown, 1 healthy, 2 unhealthy (gpsd's SAT_HEALTH_*)
    bool used;
    double elevation, azimuth, ss;
} cgps_satellite;

/// How many entries of the skyview the last SKY may have filled: libgps's MAXCHANNELS.
static inline int cgps_skyview_capacity(void) { return MAXCHANNELS; }

/// Entry `index` of the skyview the last SKY filled (`cgps_unpack` zeroes it before each SKY); false for an
/// entry the SKY did not fill (no PRN and no svid), or an index past the skyview.
static inline bool cgps_satellite_at(const struct gps_data_t *data, int index, cgps_satellite *out) {
    if (index < 0 || index >= MAXCHANNELS) return false;
    const struct satellite_t *sat = &data->skyview[index];
    if (sat->PRN <= 0 && sat->svid == 0) return false;
    out->prn = sat->PRN;
    out->has_identity = sat->svid != 0;
    out->gnssid = sat->gnssid;
    out->svid = sat->svid;
    out->health = sat->health;
    out->used = sat->used;
    out->elevation = sat->elevation;
    out->azimuth = sat->azimuth;
    out->ss = sat->ss;
    return true;
}

#endif
