#!/usr/bin/env python3
"""Generate the NMEA test fixtures in Tests/Fixtures and the whereami demo recording.

Usage:
    Scripts/make-fixtures.py                  # write the NMEA logs and their .expected.json files
    Scripts/make-fixtures.py --check          # also replay every log through gpsd and compare its TPVs
    Scripts/make-fixtures.py --record         # also remake the gpsd recordings:
                                              #   Tests/Fixtures/moving.gpsd.json
                                              #   Sources/WhereAmICore/Resources/drive.gpsd.json
                                              #   Tests/Fixtures/gst.gpsd.json
                                              #   Tests/Fixtures/multignss.gpsd.json
    Scripts/make-fixtures.py --record --only gst   # remake one recording
    add --cycle SECONDS to change gpsfake's delay between sentences (default 0.05; gpsd's output is the same
    for 0 to 0.05, only the DEVICE lines' wall-clock "activated" stamps differ)

The logs and .expected.json files are deterministic: re-running writes identical bytes (files are rewritten only
when their content changes). A recording is what `gpspipe -w` printed, CRLF line ends included; remaking one
changes only its DEVICE lines (wall-clock "activated" stamps, /dev/pts/N).

Each epoch of a log is one receiver cycle: $GPRMC, $GPGGA, $GPGSA (then $GPGSV for drive.nmea), in that order,
with CRLF line ends and correct checksums. Latitude and longitude are written as ddmm.mmmmmm / dddmm.mmmmmm, and
the expected degrees are computed from exactly those digits. Each NAME.expected.json lists the epochs with a
fix: time, latitude, longitude, altitudeMSL (null for 2D), speed (m/s, from the knots written), course (null
when none was written), mode (2 or 3).

What gpsd 3.22 makes of these logs (measured with --check): the first epoch of a log gives one TPV per sentence
(gpsd does not know the cycle yet; the second epoch of a no-fix log gives two); after that exactly one TPV per
epoch, sent when GGA arrives (GGA is the last sentence with a time, so gpsd tags it the cycle ender). GSA comes
after it, so a TPV's eph/epv/sep come from the previous epoch's DOPs (the first fix after no-fix epochs reports
eph 1899.8 m from their 99.99 HDOP). No-fix TPVs carry only "mode":1 (no time). 2D TPVs have no altitude and no
epv. SKY reports (drive.nmea) carry no time.

multignss.nmea is a receiver of four systems in NMEA 4.10 ($GNRMC, $GNGGA, a $GNGSA per system, then GSV sets of
GPS, GLONASS, Galileo and BeiDou; see MULTI_SKY). Its multignss.sky.expected.json lists each epoch's satellites as
the library must report them: constellation, id (the number within the system), gpsd's PRN, elevation, azimuth,
signal (C/N0; 0 when the log gives none) and used (listed in its system's GSA). Every run compares the recorded
SKY reports (the last of each epoch) with it: elevation, azimuth and C/N0 must agree; where gpsd names a satellite
or marks it used otherwise, the difference is printed, not failed. gpsd 3.22 (drivers/driver_nmea0183.c) sends
three SKYs an epoch (after the GLONASS, Galileo and BeiDou sets; four in the first, which ends with the GPS set
too), none with a time, with xdop/ydop/tdop/gdop it computes itself, and differs in three ways (3.25's driver
handles all three, by its source):
- it ignores GSA's system ID, so Galileo and BeiDou numbers in $GNGSA are taken for GPS PRNs: Galileo and
  BeiDou satellites are never marked used, and GPS 25 is, because Galileo 25 is used;
- it also reads the PDOP field of a 4.10 GSA as a satellite (1.32 as PRN 1, which is not in view here);
- it knows a GSV set's system only in its first sentence: BeiDou 34, in the second $GBGSV, is named SBAS 121
  (PRN 34) by the NMEA 2.x ranges.

--check and --record need gpsfake (Debian: gpsd, gpsd-clients, python3-gps); it runs under /usr/bin/python3 via
its shebang. gpsd is started with -n, but the log reaches gpsfake through a named pipe that is released only once
gpspipe is watching, so the recording starts at the log's first sentence (see replay()).
"""

import argparse
import datetime
import errno
import json
import math
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "Tests", "Fixtures")
RESOURCES = os.path.join(ROOT, "Sources", "WhereAmICore", "Resources")

DATE = datetime.datetime(2025, 6, 1, 12, 0, 0, tzinfo=datetime.timezone.utc)
KNOT = 1852.0 / 3600.0           # metres per second in one knot
EARTH_M_PER_DEG = 111_320.0      # metres per degree of latitude (good enough for a synthetic track)

# --------------------------------------------------------------------------------------------------------------
# NMEA formatting


def checksum(body):
    value = 0
    for byte in body.encode("ascii"):
        value ^= byte
    return "%02X" % value


def sentence(body):
    return "$%s*%s\r\n" % (body, checksum(body))


def micro_minutes(degrees):
    """The coordinate as an integer number of 1e-6 arc minutes (what 6 decimals of minutes can express)."""
    return int(round(abs(degrees) * 60_000_000))


def nmea_coordinate(degrees, degree_digits, positive, negative):
    """(text, hemisphere, exact degrees) for ddmm.mmmmmm / dddmm.mmmmmm."""
    total = micro_minutes(degrees)
    whole, rest = divmod(total, 60_000_000)
    text = "%0*d%02d.%06d" % (degree_digits, whole, rest // 1_000_000, rest % 1_000_000)
    hemisphere = positive if degrees >= 0 else negative
    exact = total / 60_000_000
    return text, hemisphere, (exact if degrees >= 0 else -exact)


def hhmmss(moment):
    return moment.strftime("%H%M%S") + ".%02d" % (moment.microsecond // 10_000)


def ddmmyy(moment):
    return moment.strftime("%d%m%y")


def iso(moment):
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + ".%03dZ" % (moment.microsecond // 1000)


class Epoch:
    """One receiver cycle. mode: 1 no fix, 2 2D, 3 3D."""

    def __init__(self, moment, mode, lat=None, lon=None, alt=None, geoid=None, speed=None, course=None,
                 sats=None, pdop=None, hdop=None, vdop=None, sky=None, gst=None):
        self.moment, self.mode = moment, mode
        self.lat, self.lon, self.alt, self.geoid = lat, lon, alt, geoid
        self.speed, self.course = speed, course          # m/s, degrees true
        self.sats = sats or []                           # PRNs used in the fix
        self.pdop, self.hdop, self.vdop = pdop, hdop, vdop
        self.sky = sky                                   # [(prn, elevation, azimuth, snr or None)] for GSV
        self.gst = gst                                   # (rms, major, minor, orientation, lat, lon, alt) 1-sigma

    def lines(self):
        t = hhmmss(self.moment)
        if self.mode < 2:
            out = [
                sentence("GPRMC,%s,V,,,,,,,%s,,,N" % (t, ddmmyy(self.moment))),
                sentence("GPGGA,%s,,,,,0,00,99.99,,,,,," % t),
                sentence("GPGSA,A,1,,,,,,,,,,,,,99.99,99.99,99.99"),
            ]
        else:
            lat, ns, self.exact_lat = nmea_coordinate(self.lat, 2, "N", "S")
            lon, ew, self.exact_lon = nmea_coordinate(self.lon, 3, "E", "W")
            self.knots = "%.3f" % (self.speed / KNOT)
            self.track = "" if self.course is None else "%.2f" % self.course
            self.alt_text = "" if self.mode < 3 else "%.1f" % self.alt
            rmc = "GPRMC,%s,A,%s,%s,%s,%s,%s,%s,%s,,,A" % (t, lat, ns, lon, ew, self.knots, self.track,
                                                          ddmmyy(self.moment))
            if self.mode == 3:
                height = "%s,M,%.1f,M" % (self.alt_text, self.geoid)
            else:
                height = ",,,"
            gga = "GPGGA,%s,%s,%s,%s,%s,1,%02d,%.2f,%s,," % (t, lat, ns, lon, ew, len(self.sats), self.hdop, height)
            prns = ["%02d" % p for p in self.sats[:12]] + [""] * (12 - min(12, len(self.sats)))
            dops = "%.2f,%.2f,%s" % (self.pdop, self.hdop, "" if self.vdop is None else "%.2f" % self.vdop)
            gsa = "GPGSA,A,%d,%s,%s" % (self.mode, ",".join(prns), dops)
            out = [sentence(rmc), sentence(gga), sentence(gsa)]
            if self.gst is not None:
                out.append(sentence("GPGST,%s,%.2f,%.2f,%.2f,%.1f,%.2f,%.2f,%.2f" % ((t,) + self.gst)))
        if self.sky is not None:
            out += gsv(self.sky)
        return out

    def expected(self):
        """The JSON object a test compares gpsd's TPVs with (call after lines())."""
        if self.mode < 2:
            return None
        return {
            "time": iso(self.moment),
            "latitude": round(self.exact_lat, 10),
            "longitude": round(self.exact_lon, 10),
            "altitudeMSL": float(self.alt_text) if self.alt_text else None,
            "speed": round(float(self.knots) * KNOT, 6),
            "course": float(self.track) if self.track else None,
            "mode": self.mode,
            **({} if self.gst is None else
               {"deviation": {"latitude": round(self.gst[4], 2), "longitude": round(self.gst[5], 2),
                              "altitude": round(self.gst[6], 2)}}),
        }


def gsv(sky):
    chunks = [sky[i:i + 4] for i in range(0, len(sky), 4)]
    out = []
    for number, chunk in enumerate(chunks, 1):
        fields = ["GPGSV", str(len(chunks)), str(number), "%02d" % len(sky)]
        for prn, elevation, azimuth, snr in chunk:
            fields += ["%02d" % prn, "%02d" % elevation, "%03d" % azimuth, "" if snr is None else "%02d" % snr]
        out.append(sentence(",".join(fields)))
    return out


# --------------------------------------------------------------------------------------------------------------
# Tracks


def step(lat, lon, metres_north, metres_east):
    return (lat + metres_north / EARTH_M_PER_DEG,
            lon + metres_east / (EARTH_M_PER_DEG * math.cos(math.radians(lat))))


def no_fix(start, count, interval=1.0, sky=None):
    return [Epoch(start + datetime.timedelta(seconds=i * interval), 1, sky=sky) for i in range(count)]


SATS = [2, 5, 7, 9, 13, 15, 18, 20, 26, 29]


def moving():
    """5 no-fix epochs, then 40 epochs south-west at 10 m/s across the equator and the prime meridian."""
    epochs = no_fix(DATE, 5)
    lat = lon = 0.00127
    speed, course = 10.0, 225.0
    north = speed * math.cos(math.radians(course))
    east = speed * math.sin(math.radians(course))
    for i in range(40):
        moment = DATE + datetime.timedelta(seconds=5 + i)
        alt = 50.0 + 10.0 * math.sin(2 * math.pi * i / 40)
        epochs.append(Epoch(moment, 3, lat, lon, alt, 17.0, speed, course, sats=SATS[: 8 + i % 3],
                            pdop=1.60, hdop=0.90, vdop=1.30))
        lat, lon = step(lat, lon, north, east)
    return epochs


def twod():
    """5 no-fix epochs, 10 epochs of a 2D fix (no altitude), then 5 epochs of 3D, driving north at 5 m/s."""
    epochs = no_fix(DATE, 5)
    lat, lon = 48.137154, 11.576124
    for i in range(15):
        moment = DATE + datetime.timedelta(seconds=5 + i)
        if i < 10:
            epochs.append(Epoch(moment, 2, lat, lon, None, None, 5.0, 0.0, sats=[5, 13, 20],
                                pdop=3.10, hdop=2.40, vdop=None))
        else:
            epochs.append(Epoch(moment, 3, lat, lon, 519.0 + (i - 10) * 0.5, 47.0, 5.0, 0.0,
                                sats=[5, 7, 13, 20, 26], pdop=2.20, hdop=1.50, vdop=1.60))
        lat, lon = step(lat, lon, 5.0, 0.0)
    return epochs


def tenhz():
    """30 epochs at 10 Hz, 25 m/s to the north-east (southern and eastern hemisphere)."""
    epochs = []
    lat, lon = -33.856784, 151.215297
    speed, course = 25.0, 45.0
    north = speed * math.cos(math.radians(course)) / 10
    east = speed * math.sin(math.radians(course)) / 10
    for i in range(30):
        moment = DATE + datetime.timedelta(milliseconds=100 * i)
        epochs.append(Epoch(moment, 3, lat, lon, 12.0 + 0.1 * i, 22.5, speed, course, sats=SATS[:9],
                            pdop=1.40, hdop=0.80, vdop=1.10))
        lat, lon = step(lat, lon, north, east)
    return epochs


def nofix():
    return no_fix(DATE, 30)


def gst():
    """3 no-fix epochs, then 20 epochs of a 3D fix walking north at 1.5 m/s, with a $GPGST after the GSA of every
    epoch but each fifth: 1-sigma errors that grow by 0.05 m (latitude), 0.04 m (longitude), 0.1 m (altitude) an
    epoch, as a receiver under trees might report."""
    epochs = no_fix(DATE, 3)
    lat, lon = 48.85837, 2.294481
    for i in range(20):
        moment = DATE + datetime.timedelta(seconds=3 + i)
        deviation = None if i % 5 == 4 else (
            1.2 + 0.05 * i, 2.0 + 0.1 * i, 1.1 + 0.05 * i, 30.0, 0.80 + 0.05 * i, 0.60 + 0.04 * i, 1.90 + 0.10 * i)
        epochs.append(Epoch(moment, 3, lat, lon, 35.0, 44.6, 1.5, 0.0, sats=SATS[:8],
                            pdop=1.80, hdop=1.00, vdop=1.50, gst=deviation))
        lat, lon = step(lat, lon, 1.5, 0.0)
    return epochs


# -- drive.nmea: a loop around Alexanderplatz, Berlin ----------------------------------------------------------

ROUTE = [  # corners of the loop, driven in this order and back to the first
    (52.521900, 13.413200),
    (52.524800, 13.417400),
    (52.522600, 13.422600),
    (52.519300, 13.418700),
]
DRIVE_SECONDS = 174  # epochs with a fix, after 6 without
LIGHT_LEG, LIGHT_FRACTION, LIGHT_SECONDS = 2, 0.55, 14  # a red light part-way along the third leg


def local(p, origin):
    return ((p[0] - origin[0]) * EARTH_M_PER_DEG,
            (p[1] - origin[1]) * EARTH_M_PER_DEG * math.cos(math.radians(origin[0])))


def unlocal(xy, origin):
    return (origin[0] + xy[0] / EARTH_M_PER_DEG,
            origin[1] + xy[1] / (EARTH_M_PER_DEG * math.cos(math.radians(origin[0]))))


def rounded_path(points, radius=18.0, arc_steps=6):
    """A closed polyline through `points` (local metres) with each corner replaced by a short circular-ish arc."""
    n = len(points)
    out = []
    for i in range(n):
        prev, here, nxt = points[i - 1], points[i], points[(i + 1) % n]

        def toward(a, b, d):
            length = math.hypot(b[0] - a[0], b[1] - a[1])
            return (a[0] + (b[0] - a[0]) * d / length, a[1] + (b[1] - a[1]) * d / length)
        p0, p2 = toward(here, prev, radius), toward(here, nxt, radius)
        for k in range(arc_steps + 1):  # quadratic Bezier with the corner as control point
            t = k / arc_steps
            out.append(((1 - t) ** 2 * p0[0] + 2 * (1 - t) * t * here[0] + t * t * p2[0],
                        (1 - t) ** 2 * p0[1] + 2 * (1 - t) * t * here[1] + t * t * p2[1]))
    out.append(out[0])
    return out


def drive():
    rng = random.Random(52)
    origin = ROUTE[0]
    corners = [local(p, origin) for p in ROUTE]
    path = rounded_path(corners)
    # cumulative distance along the path, and where the corners (arc midpoints) and the light are
    cumulative = [0.0]
    for a, b in zip(path, path[1:]):
        cumulative.append(cumulative[-1] + math.hypot(b[0] - a[0], b[1] - a[1]))
    total = cumulative[-1]
    arc = 7  # points per corner arc
    corner_at = [cumulative[i * arc + arc // 2] for i in range(len(ROUTE))]
    leg_start, leg_end = cumulative[LIGHT_LEG * arc + arc - 1], cumulative[(LIGHT_LEG + 1) * arc]
    light_at = leg_start + (leg_end - leg_start) * LIGHT_FRACTION

    def position(s):
        s = s % total
        for i in range(1, len(cumulative)):
            if cumulative[i] >= s:
                a, b = path[i - 1], path[i]
                f = (s - cumulative[i - 1]) / max(1e-9, cumulative[i] - cumulative[i - 1])
                return (a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f)
        return path[-1]

    def heading(s):
        a, b = position(s - 1.0), position(s + 1.0)
        return math.degrees(math.atan2(b[1] - a[1], b[0] - a[0])) % 360.0

    # satellites: (prn, elevation, azimuth, base snr); the first nine are used in the fix
    sky_base = [(2, 67, 94, 44), (5, 41, 298, 41), (7, 23, 51, 36), (9, 58, 182, 43), (13, 16, 317, 31),
                (15, 34, 139, 39), (18, 72, 266, 45), (20, 28, 221, 37), (26, 11, 12, 29), (29, 6, 168, 0)]

    def sky(second, acquired):
        out = []
        for prn, elevation, azimuth, snr in sky_base:
            drift = second / 600.0
            value = None
            if acquired and snr:
                value = max(15, min(50, snr + rng.randint(-2, 2)))
            out.append((prn, elevation, int(azimuth + drift) % 360, value))
        return out

    used = [p for p, _, _, snr in sky_base if snr][:9]
    epochs = []
    for i in range(6):  # cold start: satellites in view, no fix yet
        epochs.append(Epoch(DATE + datetime.timedelta(seconds=i), 1, sky=sky(i, acquired=i >= 3)))

    v_max, accel, decel, v_corner = 13.6, 1.5, 2.0, 4.5
    park_at = total                      # one lap, then park where we started
    s, v, stopped_for = 0.0, 0.0, 0.0
    dt = 0.1                             # integrate in tenths of a second, report every second

    def target_speed(s):
        to_corner = min((c - s - 0.5) % total for c in corner_at) + 0.5
        target = min(v_max, math.sqrt(v_corner ** 2 + 2 * decel * max(0.0, to_corner - 8)))
        for stop in ((light_at,) if stopped_for < LIGHT_SECONDS else ()) + (park_at,):
            if stop >= s:
                target = min(target, math.sqrt(2 * decel * (stop - s)))
        return target

    for k in range(DRIVE_SECONDS):
        second = 6 + k
        moment = DATE + datetime.timedelta(seconds=second)
        for _ in range(int(round(1 / dt))):
            if abs(s - light_at) < 0.05 and stopped_for < LIGHT_SECONDS:
                v = 0.0
                stopped_for += dt
                continue
            target = target_speed(s)
            v_new = min(target, v + accel * dt) if target > v else max(target, v - decel * dt)
            s = min(park_at, s + (v + v_new) / 2 * dt)
            if s < light_at < s + 0.3 and stopped_for < LIGHT_SECONDS:  # creep the last centimetres
                s = light_at
            v = 0.0 if s >= park_at else v_new
        xy = position(s)
        noise = (rng.gauss(0, 0.4), rng.gauss(0, 0.4))
        lat, lon = unlocal((xy[0] + noise[0], xy[1] + noise[1]), origin)
        reported_speed = max(0.0, v + rng.gauss(0, 0.05)) if v > 0.05 else 0.0
        course = None if v < 0.5 else round(heading(s), 1)
        alt = 35.0 + 3.0 * math.sin(s / 300.0) + rng.gauss(0, 0.3)
        hdop = 0.9 + 0.1 * rng.randint(0, 3)
        epochs.append(Epoch(moment, 3, lat, lon, alt, 39.6, reported_speed, course, sats=used,
                            pdop=round(hdop + 0.7, 2), hdop=hdop, vdop=round(hdop + 0.4, 2),
                            sky=sky(second, acquired=True)))
    return epochs


# -- multignss.nmea: a receiver of four systems, in NMEA 4.10 ---------------------------------------------------

# What a u-blox M8-class receiver sends each second in NMEA 4.10 mode: $GNRMC, $GNGGA, one $GNGSA per system (its
# last field the NMEA system ID: 1 GPS, 2 GLONASS, 3 Galileo, 4 BeiDou), then the GSV sets of each system, GPS
# first (every gpsd release expects the GPS set to open the cycle), each ending with the NMEA signal ID (1: GPS
# L1 C/A, GLONASS L1 OF, BeiDou B1I; 7: Galileo E1). Satellites are numbered as NMEA 4.10 numbers them in GSV and
# GSA: GPS 1-32, SBAS 33-64 (its PRN less 87), GLONASS 65-96, QZSS 193-197 (all in $GPGSV), Galileo 1-36 and
# BeiDou 1-37 (numbers only within their own talker). The last epochs name the BeiDou set $BDGSV, the talker of
# receivers before NMEA 4.10 (Skytraq, SiRF), which gpsd reads as it reads $GBGSV.

# (system, NMEA number, elevation, azimuth, base C/N0 or None when not tracked, used in the fix)
MULTI_SKY = [
    ("GP", 2, 63, 95, 45, True), ("GP", 5, 38, 292, 41, True), ("GP", 10, 21, 48, 36, True),
    ("GP", 12, 55, 181, 44, True), ("GP", 15, 14, 318, 31, False), ("GP", 18, 71, 262, 46, True),
    ("GP", 25, 29, 222, 38, False), ("GP", 29, 7, 167, None, False),
    ("GP", 49, 32, 203, 39, False),          # SBAS: EGNOS PRN 136
    ("GP", 193, 12, 140, 30, False),         # QZSS: QZS-1
    ("GL", 65, 48, 61, 43, True), ("GL", 66, 27, 119, 37, True), ("GL", 72, 66, 330, 44, True),
    ("GL", 75, 9, 26, 29, False), ("GL", 81, 35, 244, 40, True), ("GL", 88, 4, 287, None, False),
    ("GA", 3, 58, 76, 42, True), ("GA", 8, 24, 153, 37, True), ("GA", 13, 41, 301, 40, True),
    ("GA", 25, 69, 205, 45, True), ("GA", 27, 6, 13, None, False),
    ("GB", 6, 44, 262, 39, True), ("GB", 11, 19, 97, 33, False), ("GB", 14, 52, 134, 41, True),
    ("GB", 19, 73, 18, 44, True), ("GB", 34, 8, 209, None, False),
]
MULTI_SYSTEMS = [  # talker, NMEA system ID, NMEA signal ID
    ("GP", 1, 1), ("GL", 2, 1), ("GA", 3, 7), ("GB", 4, 1),
]
MULTI_EPOCHS = 12
MULTI_BDGSV_FROM = 9  # epochs from here on name the BeiDou set $BDGSV


def gpsd_identity(system, number):
    """(constellation, id, prn) of a satellite as gpsd numbers it, from its GSV talker and NMEA 4.10 number."""
    if system == "GP":
        if number <= 32:
            return "GPS", number, number
        if number <= 64:
            return "SBAS", number + 87, number
        return "QZSS", number - 192, number
    if system == "GL":
        return "GLONASS", number - 64, number
    if system == "GA":
        return "Galileo", number, 300 + number
    return "BeiDou", number, 400 + number


class GNSSEpoch(Epoch):
    """One second of the multi-constellation receiver: a 3D fix, and `sky` as MULTI_SKY with this epoch's C/N0."""

    def __init__(self, moment, lat, lon, alt, speed, course, sky, beidou_talker):
        used = [(system, number) for system, number, _, _, snr, is_used in sky if is_used and snr]
        super().__init__(moment, 3, lat, lon, alt, 47.4, speed, course, sats=used, pdop=1.32, hdop=0.71,
                         vdop=1.11, sky=sky)
        self.beidou_talker = beidou_talker

    def lines(self):
        t = hhmmss(self.moment)
        lat, ns, self.exact_lat = nmea_coordinate(self.lat, 2, "N", "S")
        lon, ew, self.exact_lon = nmea_coordinate(self.lon, 3, "E", "W")
        self.knots = "%.3f" % (self.speed / KNOT)
        self.track = "%.2f" % self.course
        self.alt_text = "%.1f" % self.alt
        out = [
            # NMEA 4.10 adds the navigational status (V: no status given) after the mode indicator
            sentence("GNRMC,%s,A,%s,%s,%s,%s,%s,%s,%s,,,A,V" % (t, lat, ns, lon, ew, self.knots, self.track,
                                                              ddmmyy(self.moment))),
            sentence("GNGGA,%s,%s,%s,%s,%s,1,%02d,%.2f,%s,M,%.1f,M,," % (t, lat, ns, lon, ew, len(self.sats),
                                                                        self.hdop, self.alt_text, self.geoid)),
        ]
        dops = "%.2f,%.2f,%.2f" % (self.pdop, self.hdop, self.vdop)
        for talker, system_id, _ in MULTI_SYSTEMS:
            numbers = ["%02d" % n for s, n in self.sats if s == talker][:12]
            gsa = "GNGSA,A,3,%s,%s,%d" % (",".join(numbers + [""] * (12 - len(numbers))), dops, system_id)
            out.append(sentence(gsa))
        for talker, _, signal_id in MULTI_SYSTEMS:
            in_view = [(n, e, a, snr) for s, n, e, a, snr, _ in self.sky if s == talker]
            name = self.beidou_talker if talker == "GB" else talker
            chunks = [in_view[i:i + 4] for i in range(0, len(in_view), 4)]
            for number, chunk in enumerate(chunks, 1):
                fields = [name + "GSV", str(len(chunks)), str(number), "%02d" % len(in_view)]
                for prn, elevation, azimuth, snr in chunk:
                    fields += ["%02d" % prn, "%02d" % elevation, "%03d" % azimuth, "" if snr is None else "%02d" % snr]
                out.append(sentence(",".join(fields + [str(signal_id)])))
        return out

    def expected_sky(self):
        """What the library must report for this epoch's satellites, from the NMEA written (call after lines())."""
        satellites = []
        for system, number, elevation, azimuth, snr, used in self.sky:
            constellation, ident, prn = gpsd_identity(system, number)
            satellites.append({"constellation": constellation, "id": ident, "prn": prn,
                               "elevation": elevation, "azimuth": azimuth,
                               # an empty C/N0 field: in view, not tracked (gpsd reports 0)
                               "signal": 0 if snr is None else snr,
                               "used": (system, number) in self.sats})
        return {"time": iso(self.moment), "visible": len(satellites),
                "used": sum(1 for s in satellites if s["used"]), "satellites": satellites}


def multignss():
    """12 epochs of a 3D fix walking east at 1.2 m/s by Zurich's main station, with 26 satellites of GPS (with an
    SBAS and a QZSS satellite), GLONASS, Galileo and BeiDou in view; 4 of them not tracked (no C/N0), 16 used. The
    C/N0 of each tracked satellite varies by up to 2 dB-Hz from epoch to epoch; GLONASS 81 (NMEA 81) drops out of
    the fix for epochs 5 to 7 while its signal fades (15 used then)."""
    rng = random.Random(410)
    lat, lon = 47.378177, 8.540192
    epochs = []
    for i in range(MULTI_EPOCHS):
        moment = DATE + datetime.timedelta(seconds=i)
        sky = []
        for system, number, elevation, azimuth, snr, used in MULTI_SKY:
            value = None if snr is None else snr + rng.randint(-2, 2)
            if system == "GL" and number == 81 and 5 <= i <= 7:
                value, used = 22, False
            sky.append((system, number, elevation, (azimuth + i // 6) % 360, value, used))
        epochs.append(GNSSEpoch(moment, lat, lon, 408.0 + 0.1 * i, 1.2, 90.0, sky,
                                "BD" if i >= MULTI_BDGSV_FROM else "GB"))
        lat, lon = step(lat, lon, 0.0, 1.2)
    return epochs


# --------------------------------------------------------------------------------------------------------------
# Writing


LOGS = {
    "moving": moving,
    "twod": twod,
    "tenhz": tenhz,
    "nofix": nofix,
    "drive": drive,
    "gst": gst,
    "multignss": multignss,
}


def write_if_changed(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.exists(path):
        with open(path, "rb") as f:
            if f.read() == data:
                return False
    with open(path, "wb") as f:
        f.write(data)
    return True


def write_fixtures():
    expectations = {}
    for name, make in LOGS.items():
        epochs = make()
        text = "".join(line for epoch in epochs for line in epoch.lines())
        path = os.path.join(FIXTURES, name + ".nmea")
        changed = write_if_changed(path, text.encode("ascii"))
        expected = [e for e in (epoch.expected() for epoch in epochs) if e is not None]
        expectations[name] = expected
        print("%s %s (%d epochs, %d with a fix)" % ("wrote" if changed else "kept ", path, len(epochs),
                                                     len(expected)))
        if expected:
            body = "[\n" + ",\n".join("  " + json.dumps(e, separators=(", ", ": ")) for e in expected) + "\n]\n"
            jpath = os.path.join(FIXTURES, name + ".expected.json")
            changed = write_if_changed(jpath, body.encode("ascii"))
            print("%s %s" % ("wrote" if changed else "kept ", jpath))
        skies = [epoch.expected_sky() for epoch in epochs if hasattr(epoch, "expected_sky")]
        if skies:
            expectations[name + ".sky"] = skies
            jpath = os.path.join(FIXTURES, name + ".sky.expected.json")
            changed = write_if_changed(jpath, sky_json(skies).encode("ascii"))
            print("%s %s (%d epochs)" % ("wrote" if changed else "kept ", jpath, len(skies)))
    return expectations


def sky_json(skies):
    """The epochs' expected satellites: one epoch's counts on a line, then one line per satellite."""
    def compact(value):
        return json.dumps(value, separators=(", ", ": "))
    epochs = []
    for sky in skies:
        head = compact({k: v for k, v in sky.items() if k != "satellites"})[:-1]
        satellites = ",\n".join("    " + compact(s) for s in sky["satellites"])
        epochs.append("  %s, \"satellites\": [\n%s\n  ]}" % (head, satellites))
    return "[\n" + ",\n".join(epochs) + "\n]\n"


# --------------------------------------------------------------------------------------------------------------
# Replaying through a real gpsd


GPSFAKE = "/usr/bin/gpsfake"


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, proc, deadline):
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def release(fifo, log, gpsfake, deadline):
    """Let a gpsfake that is blocked opening the named pipe `fifo` (its log) read the log `log`.

    gpsfake reads a log twice: once through the path it was given (only used for Delay-Cookie re-splitting), then
    again after reopening it by name. So: open the pipe's write end (possible as soon as gpsfake waits in open()),
    put a copy of the log in the pipe's place, and close the write end. The first read sees an empty file, the
    reopen gets the copy. Sources/GPSDTestSupport/LogGate.swift does the same.
    """
    while True:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as error:
            if error.errno != errno.ENXIO or gpsfake.poll() is not None or time.monotonic() > deadline:
                raise
            time.sleep(0.005)
    try:
        shutil.copyfile(log, fifo + ".log")
        os.rename(fifo + ".log", fifo)
    finally:
        os.close(fd)


def replay(log, cycle=0.05):
    """Replay `log` once through gpsfake and return gpspipe -w's output lines (with their line ends), from gpsd's
    VERSION line to the end.

    gpsfake only reads its log after gpsd listens. The log is handed over through a named pipe that is released
    once gpspipe is connected and watching, so gpsd (started with -n) reads the first sentence after the client is
    there and the recording starts at the log's first sentence.
    """
    with open(log, "rb") as f:
        data = f.read()
    tmp = tempfile.mkdtemp(prefix="make-fixtures.")
    fifo = os.path.join(tmp, os.path.basename(log))
    env = dict(os.environ, TMPDIR=tmp)
    errors = os.path.join(tmp, "gpsfake.err")
    gpsfake = client = None
    try:
        for _attempt in range(3):
            if os.path.lexists(fifo):
                os.unlink(fifo)
            os.mkfifo(fifo)
            port = free_port()
            with open(errors, "wb") as err:
                gpsfake = subprocess.Popen([GPSFAKE, "-q", "-n", "-1", "-W", "1", "-P", str(port), "-c", str(cycle),
                                            fifo], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                           stderr=err, start_new_session=True)
            if wait_for_port(port, gpsfake, time.monotonic() + 15):
                break
            os.killpg(gpsfake.pid, signal.SIGKILL)
            gpsfake.wait()
            gpsfake = None
        if gpsfake is None:
            with open(errors) as err:
                raise RuntimeError("gpsfake did not come up: " + err.read())
        client = subprocess.Popen(["gpspipe", "-w", "127.0.0.1:%d" % port], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, start_new_session=True)
        lines = []
        watching = threading.Event()

        def read():
            for raw in client.stdout:
                lines.append(raw.decode("utf-8"))  # as gpspipe writes it: gpsd's CRLF line ends included
                if lines[-1].startswith('{"class":"WATCH"'):
                    watching.set()
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        if not watching.wait(10):
            raise RuntimeError("gpspipe never started watching")
        release(fifo, log, gpsfake, time.monotonic() + 10)
        # -1 -W 1: gpsfake stops gpsd a second after the log ran out; gpspipe then sees the end of the stream.
        gpsfake.wait(timeout=30 + data.count(b"\n") * (cycle + 0.01))
        try:
            client.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        reader.join(5)
        return lines
    finally:
        for proc in (client, gpsfake):
            if proc is not None and proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def summarize(lines, expected):
    """Group TPVs by time and compare them with the expected fixes; returns a list of problems."""
    tpvs = [json.loads(l) for l in lines if l.startswith('{"class":"TPV"')]
    by_time = {}
    for tpv in tpvs:
        by_time.setdefault(tpv.get("time"), []).append(tpv)
    problems = []
    for e in expected:
        got = by_time.get(e["time"], [])
        fixes = [t for t in got if t.get("mode", 0) >= 2 and "lat" in t]
        if not fixes:
            problems.append("%s: no TPV with a fix" % e["time"])
            continue
        last = fixes[-1]
        if abs(last["lat"] - e["latitude"]) > 1e-8 or abs(last["lon"] - e["longitude"]) > 1e-8:
            problems.append("%s: lat/lon %s,%s != %s,%s" % (e["time"], last["lat"], last["lon"], e["latitude"],
                                                           e["longitude"]))
        if last["mode"] != e["mode"]:
            problems.append("%s: mode %s != %s" % (e["time"], last["mode"], e["mode"]))
        if e["altitudeMSL"] is not None and abs(last.get("altMSL", float("nan")) - e["altitudeMSL"]) > 1e-3:
            problems.append("%s: altMSL %s != %s" % (e["time"], last.get("altMSL"), e["altitudeMSL"]))
        if e["speed"] is not None and abs(last.get("speed", float("nan")) - e["speed"]) > 2e-3:
            problems.append("%s: speed %s != %s" % (e["time"], last.get("speed"), e["speed"]))
        if e["course"] is not None and abs(last.get("track", float("nan")) - e["course"]) > 1e-3:
            problems.append("%s: track %s != %s" % (e["time"], last.get("track"), e["course"]))
    return tpvs, by_time, problems


def check(expectations, cycle):
    ok = True
    for name in LOGS:
        lines = replay(os.path.join(FIXTURES, name + ".nmea"), cycle)
        tpvs, by_time, problems = summarize(lines, expectations[name])
        fixes = [t for t in tpvs if t.get("mode", 0) >= 2]
        print("%s: %d lines, %d TPVs (%d with mode >= 2), %d epochs with a fix expected, %d problems"
              % (name, len(lines), len(tpvs), len(fixes), len(expectations[name]), len(problems)))
        for p in problems:
            print("  " + p)
        if name == "nofix" and fixes:
            print("  unexpected fix in nofix")
            ok = False
        ok = ok and not problems
        if name + ".sky" in expectations:
            ok = report_sky(name + " SKY", lines, expectations[name + ".sky"]) and ok
    return ok


GNSSIDS = ["GPS", "SBAS", "Galileo", "BeiDou", "IMES", "QZSS", "GLONASS", "NavIC"]  # gpsd's gnssid, u-blox's numbering


def check_sky(lines, skies):
    """Compare each epoch's last SKY (the one after its last GSV set) with the satellites expected from the NMEA.

    Returns (problems, differences): problems are satellites missing or whose elevation, azimuth or C/N0 differ
    from what the NMEA says (gpsd copies these); differences are where gpsd names a satellite or marks it used
    otherwise than the NMEA means it, one line per satellite and kind, with the epochs it happened in."""
    by_time, time = {}, None
    for line in lines:
        report = json.loads(line)
        if report["class"] == "TPV" and "time" in report:
            time = report["time"]
        elif report["class"] == "SKY" and time is not None:
            by_time[time] = report
    problems, differences = [], {}
    for sky in skies:
        got = by_time.get(sky["time"])
        if got is None:
            problems.append("%s: no SKY" % sky["time"])
            continue
        reported = got.get("satellites", [])
        if len(reported) != len(sky["satellites"]):
            problems.append("%s: %d satellites, %d expected" % (sky["time"], len(reported), len(sky["satellites"])))
            continue
        for want, have in zip(sky["satellites"], reported):  # gpsd keeps the order of the GSV sentences
            name = "%s %d" % (want["constellation"], want["id"])
            for key, member in (("elevation", "el"), ("azimuth", "az"), ("signal", "ss")):
                if have.get(member) != want[key]:
                    problems.append("%s %s: %s %s, %s expected" % (sky["time"], name, member, have.get(member),
                                                                  want[key]))
            named = (GNSSIDS[have["gnssid"]] if "gnssid" in have else "?", have.get("svid"), have["PRN"])
            if named != (want["constellation"], want["id"], want["prn"]):
                differences.setdefault("%s (PRN %d): gpsd names it %s %s, PRN %d" % ((name, want["prn"]) + named),
                                       []).append(sky["time"])
            if have["used"] != want["used"]:
                differences.setdefault("%s: gpsd marks it %s" % (name, "used" if have["used"] else "unused"),
                                       []).append(sky["time"])
    notes = ["%s (%d of %d epochs)" % (text, len(times), len(skies)) for text, times in differences.items()]
    return problems, notes


def report_sky(source, lines, skies):
    problems, notes = check_sky(lines, skies)
    print("%s: %d SKY reports, %d epochs expected, %d problems, %d differences in naming or use"
          % (source, sum(1 for l in lines if l.startswith('{"class":"SKY"')), len(skies), len(problems), len(notes)))
    for line in problems + notes:
        print("  " + line)
    return not problems


RECORDINGS = (("moving", os.path.join(FIXTURES, "moving.gpsd.json")),
              ("drive", os.path.join(RESOURCES, "drive.gpsd.json")),
              ("gst", os.path.join(FIXTURES, "gst.gpsd.json")),
              ("multignss", os.path.join(FIXTURES, "multignss.gpsd.json")))


def record(cycle, only=None):
    for name, target in RECORDINGS:
        if only and name not in only:
            continue
        lines = replay(os.path.join(FIXTURES, name + ".nmea"), cycle)
        changed = write_if_changed(target, "".join(lines).encode("utf-8"))
        print("%s %s (%d lines)" % ("wrote" if changed else "kept ", target, len(lines)))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="replay each log through gpsfake and compare")
    parser.add_argument("--record", action="store_true", help="remake the gpsd recordings (moving, drive, gst)")
    parser.add_argument("--only", action="append", help="with --record: remake only this one (repeatable)")
    parser.add_argument("--cycle", type=float, default=0.05, help="gpsfake -c: seconds between sentences")
    args = parser.parse_args()
    expectations = write_fixtures()
    status = 0
    for name, target in RECORDINGS:  # the recordings of logs with satellites expected, as they are on disk
        if name + ".sky" in expectations and os.path.exists(target):
            with open(target, encoding="utf-8") as f:
                if not report_sky(os.path.relpath(target, ROOT), f.readlines(), expectations[name + ".sky"]):
                    status = 1
    if args.check and not check(expectations, args.cycle):
        status = 1
    if args.record:
        record(args.cycle, args.only)
    return status


if __name__ == "__main__":
    sys.exit(main())
