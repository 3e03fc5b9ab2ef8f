#!/usr/bin/env python3
"""Writes the seed corpus of each fuzz target into Fuzz/Corpus/TARGET/ (Scripts/fuzz runs them; FuzzCheckTests
replays them): gpsd's lines from the test fixtures and the recording whereami bundles, gpsd's JSON forms as
`man gpsd_json` shows them, fixes' JSON as whereami writes it, NavSatFix's as JSONEncoder writes it, servers and
command lines from the README. Run it again after changing what is below; the files are committed."""
import json
import pathlib
import shutil

root = pathlib.Path(__file__).resolve().parent.parent
corpus = root / "Fuzz" / "Corpus"
recording = root / "Sources" / "WhereAmICore" / "Resources" / "drive.gpsd.json"
fixtures = root / "Tests" / "Fixtures"


def lines_of(path):
    return [line.rstrip("\r") for line in path.read_text().splitlines() if line.strip()]


def report_class(line):
    try:
        return json.loads(line).get("class", "?")
    except ValueError:
        return "?"


def decoder_seeds():
    seeds = {}
    # The first lines of each class (and of each TPV mode) from every recording we have.
    for path in [recording, *sorted(fixtures.glob("*.gpsd.json"))]:
        lines = lines_of(path)
        for line in lines:
            kind = report_class(line)
            if kind == "TPV":
                kind += "-mode%d" % json.loads(line).get("mode", 0)
            seeds.setdefault("%s-%s" % (path.name.split(".")[0], kind.lower()), line)
        # A session's start, as one read brings it: several lines, CRLF as gpspipe writes them.
        seeds["%s-start" % path.name.split(".")[0]] = "\r\n".join(lines[:16]) + "\r\n"
    # gpsd's JSON forms, as man gpsd_json shows them.
    seeds.update({
        "man-tpv": '{"class":"TPV","device":"/dev/pts/1","time":"2005-06-08T10:34:48.283Z","ept":0.005,'
                   '"lat":46.498293369,"lon":7.567411672,"alt":1343.127,"eph":36.000,"epv":32.321,'
                   '"track":10.3788,"speed":0.091,"climb":-0.085,"mode":3}',
        "man-sky": '{"class":"SKY","device":"/dev/pts/1","time":"2005-07-08T11:28:07.114Z","xdop":1.55,"hdop":1.24,'
                   '"pdop":1.99,"satellites":[{"PRN":23,"el":6,"az":84,"ss":0,"used":false},'
                   '{"PRN":8,"el":66,"az":189,"ss":44,"used":true},{"PRN":10,"el":51,"az":304,"ss":29,"used":true}]}',
        "man-gst": '{"class":"GST","device":"/dev/ttyUSB0","time":"2010-12-07T10:23:07.096Z","rms":2.440,'
                   '"major":1.660,"minor":1.120,"orient":68.989,"lat":1.600,"lon":1.200,"alt":2.520}',
        "man-att": '{"class":"ATT","time":1270938096.843,"heading":14223.00,"mag_st":"N","pitch":169.00,'
                   '"pitch_st":"N","roll":-43.00,"roll_st":"N","dip":13641.000,"mag_x":2454.000}',
        "man-poll": '{"class":"POLL","time":"2010-06-04T10:31:00.289Z","active":1,"tpv":[{"class":"TPV",'
                    '"device":"/dev/ttyUSB0","time":"2010-09-08T13:33:06.095Z","ept":0.005,"lat":40.035093060,'
                    '"lon":-75.519748733,"track":99.4319,"speed":0.123,"mode":2}],"sky":[{"class":"SKY",'
                    '"device":"/dev/ttyUSB0","time":1270517264.240,"hdop":9.20,"satellites":[{"PRN":16,"el":55,'
                    '"az":42,"ss":36,"used":true},{"PRN":19,"el":25,"az":177,"ss":0,"used":false}]}]}',
        "man-toff": '{"class":"TOFF","device":"/dev/ttyUSB0","real_sec":1330212592,"real_nsec":343182,'
                    '"clock_sec":1330212592,"clock_nsec":343184,"precision":-2}',
        "man-pps": '{"class":"PPS","device":"/dev/ttyUSB0","real_sec":1330212592,"real_nsec":343182,'
                   '"clock_sec":1330212592,"clock_nsec":343184,"precision":-3}',
        "man-osc": '{"class":"OSC","running":true,"device":"/dev/ttyUSB0","reference":true,"disciplined":true,"delta":67}',
        "man-devices": '{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/pts/1","flags":1,'
                       '"driver":"SiRF binary"},{"class":"DEVICE","path":"/dev/pts/3","flags":4,"driver":"AIVDM"}]}',
        "man-device-gone": '{"class":"DEVICE","path":"/dev/pts1","activated":0}',
        "man-error": '{"class":"ERROR","message":"Unrecognized request \'?FOO\'"}',
        "man-watch": '{"class":"WATCH","enable":true,"json":true,"nmea":false,"raw":0,"scaled":false,'
                     '"timing":false,"split24":false,"pps":false}',
        # gpsd 3.23+: RTK baselines, SKY counts, a receiver's health and constellation.
        "tpv-rtk": '{"class":"TPV","device":"/dev/ttyACM0","mode":3,"status":3,"time":"2025-06-01T12:00:05.000Z",'
                   '"lat":52.5,"lon":13.4,"altHAE":80.5,"altMSL":40.25,"eph":0.02,"epv":0.03,"epx":0.01,"epy":0.01,'
                   '"eps":0.02,"epd":1.5,"speed":0.01,"track":359.9,"climb":0.0,"baseE":3.2,"baseN":-1.1,'
                   '"baseU":0.05,"baseL":3.4,"baseC":109.0}',
        "sky-counts": '{"class":"SKY","device":"/dev/ttyACM0","nSat":12,"uSat":9,"satellites":[{"PRN":5,'
                      '"gnssid":0,"svid":5,"el":40.0,"az":90.0,"ss":30.0,"used":true,"health":1}]}',
        # Headings: what gpsd 3.22 and 3.25 sent for $GPHDT, 3.25 for $GPHDT with $HCHDM, a TNT compass's ATT, and
        # a TPV with gpsd's magnetic variation, which a later ATT of its receiver takes.
        "att-hdt": '{"class":"ATT","device":"/dev/pts/1","heading":46.500}',
        "att-hdm": '{"class":"ATT","device":"/dev/pts/1","heading":46.500,"mheading":40.000}',
        "att-tnt": '{"class":"ATT","device":"/dev/pts/1","heading":46.500,"mag_st":"N","pitch":1.500,"pitch_st":"N",'
                   '"roll":-2.200,"roll_st":"N","dip":60.000,"mag_x":2454.00000}',
        "tpv-magvar-att": '{"class":"TPV","device":"/dev/pts/1","mode":3,"time":"2025-06-01T12:00:01.000Z",'
                          '"lat":48.137154,"lon":11.576124,"track":10.0,"magtrack":13.3414,"magvar":3.3,"speed":5.0}'
                          '\r\n{"class":"ATT","device":"/dev/pts/1","mheading":40.000}\r\n',
        # What once trapped or stalled (FailCases holds the rest).
        "tpv-long-fraction": '{"class":"TPV","device":"/dev/x","mode":3,'
                             '"time":"2025-06-01T12:00:05.12345678901234567890Z","lat":1.0,"lon":2.0}',
        "poll-nested": '{"class":"POLL","tpv":[' * 3 + '{"class":"TPV","mode":3,"lat":1,"lon":2}' + ']}' * 3,
        "tpv-escapes": '{"class":"TPV","device":"/dev/\\u0001x\\u001b[31m","mode":3,'
                       '"time":"2025-06-01T12:00:06.000Z","lat":52.5,"lon":13.4}',
    })
    return seeds


def json_seeds():
    seeds = {}
    # Fixes as whereami writes them (the library's jsonText), from the bundled recording: see README's transcript.
    seeds.update({
        "fix-first": '{"timestamp":"2025-06-01T12:00:06.000Z","latitude":52.52180605,"longitude":13.413395733,'
                     '"altitude":34.5,"ellipsoidalAltitude":74.1,"horizontalAccuracy":1899.81,"verticalAccuracy":2299.77,'
                     '"speed":1.567,"course":312.4,"fix":"3D","status":"gps","device":"/dev/pts/1"}',
        "fix-moving": '{"latitude":0.001079433,"longitude":0.001079433,"altitude":54.5,"ellipsoidalAltitude":71.5,'
                      '"verticalAccuracy":29.9,"speed":10.0,"course":225.0,"climb":1.4,'
                      '"timestamp":"2025-06-01T12:00:08.000Z","fix":"3D","status":"gps","device":"/dev/pts/1"}',
        "fix-every-field": '{"timestamp":"2025-06-01T12:00:05.100Z","latitude":-33.856784,"longitude":151.215297,'
                           '"altitude":12.5,"ellipsoidalAltitude":34.0,"horizontalAccuracy":0.02,"verticalAccuracy":0.03,'
                           '"latitudeAccuracy":0.01,"longitudeAccuracy":0.01,"latitudeDeviation":0.008,'
                           '"longitudeDeviation":0.006,"altitudeDeviation":0.019,"baselineEast":3.2,'
                           '"baselineNorth":-1.1,"baselineUp":0.05,"baselineLength":3.4,"baselineCourse":109.0,'
                           '"speed":0.01,"speedAccuracy":0.02,"course":359.9,"courseAccuracy":1.5,"climb":-0.1,'
                           '"fix":"3D","status":"rtkFixed","device":"/dev/ttyACM0"}',
        "fix-2d": '{"timestamp":"2025-06-01T12:00:07.000Z","latitude":48.1,"longitude":11.5,"fix":"2D","status":"dgps"}',
        "fix-minimal": '{"latitude":0,"longitude":0}',
        "fix-escaped-device": '{"latitude":1.0,"longitude":2.0,"device":"/dev/\\u0001x\\u001b[31m\\u202e"}',
        "fix-edges": '{"timestamp":"1980-01-01T00:00:00Z","latitude":-90.0,"longitude":180.0,"altitude":-11000.0,'
                     '"speed":0.0,"course":360.0,"fix":"3D","status":"simulated"}',
        "fix-nanoseconds": '{"timestamp":"2099-12-31T23:59:59.999999999Z","latitude":89.9,"longitude":-179.9}',
    })
    # NavSatFix as JSONEncoder writes it (dates as seconds since 2001).
    covariance = [25.575633785460533, 0, 0, 0, 28.672707463800833, 0, 0, 0, 232.72669101225935]
    seeds["navsatfix-approximated"] = json.dumps({
        "timestamp": 770_472_016.0, "status": 0, "service": 1, "latitude": 52.5218, "longitude": 13.4134,
        "altitude": 74.1, "positionCovariance": covariance, "positionCovarianceType": 1, "hasVerticalVariance": True},
        separators=(",", ":"))
    seeds["navsatfix-known"] = json.dumps({
        "timestamp": 770_472_003.0, "status": 2, "service": 9, "latitude": 48.85837, "longitude": 2.294481,
        "altitude": 79.6, "positionCovariance": [0.36, 0, 0, 0, 0.64, 0, 0, 0, 3.61], "positionCovarianceType": 2,
        "hasVerticalVariance": True}, separators=(",", ":"))
    seeds["navsatfix-unknown"] = json.dumps({
        "status": -1, "service": 1, "latitude": 0.0, "longitude": 0.0, "positionCovariance": [0] * 9,
        "positionCovarianceType": 0, "hasVerticalVariance": False}, separators=(",", ":"))
    # SkyView as whereami --sky --format json writes it (its jsonText).
    seeds["sky-every-system"] = (
        '{"timestamp":"2025-06-01T12:00:05.000Z","device":"/dev/ttyACM0","visible":4,"used":3,"hdop":0.71,'
        '"vdop":1.11,"pdop":1.32,"satellites":[{"constellation":"GPS","id":5,"prn":5,"elevation":31.0,'
        '"azimuth":86.0,"signalStrength":40.0,"used":true},{"constellation":"GLONASS","id":6,"prn":70,'
        '"elevation":45.0,"azimuth":250.0,"signalStrength":35.0,"used":true,"health":"unhealthy"},'
        '{"constellation":"Galileo","id":11,"prn":311,"elevation":52.0,"azimuth":120.0,"signalStrength":42.0,'
        '"used":true,"health":"healthy"},{"constellation":"BeiDou","id":19,"prn":419,"used":false}]}')
    seeds["sky-empty"] = '{"satellites":[]}'
    return seeds


def server_seeds():
    servers = ["localhost", "127.0.0.1:2947", "[::1]:2948", "rover.lan:2947:/dev/ttyACM0", ":2947", "host::/dev/x",
               "[fe80::1%eth0]:2947", "gpsd.example.org", "10.0.0.7:2947:/dev/serial/by-id/usb-u-blox_GNSS-if00",
               "[::1]", "[2001:db8::7]:2947:/dev/ttyUSB0", "::/dev/pts/1"]
    return {"server-%02d" % number: text for number, text in enumerate(servers)}


def argument_seeds():
    command_lines = [
        [], ["--follow", "--format", "json"], ["--timeout", "inf", "--max-age", "5"],
        ["--demo", "--speed", "0", "--follow", "--count", "3"], ["--replay", "/tmp/drive.gpsd.json", "--speed", "2"],
        ["127.0.0.1:2947:/dev/ttyUSB0", "--accuracy", "25"], ["--follow", "--distance", "5", "--interval", "1"],
        ["-f", "-q", "--format", "gpx"], ["help"], ["--version"], ["--format", "csv", "[::1]:2948"],
        ["--timeout", "1.5", "--max-age", "never"], ["--demo", "--speed", "0.001", "--format", "geojson", "-f"],
        # The edges of the quick path (WhereAmI.quickParse), which declines what it does not read as the parser would.
        ["127.0.0.1:2947", "--max-age", "5", "--format=json", "-q"], ["-f", "--follow"], ["-fq"],
        ["--timeout", "-1"], ["--", "localhost"], ["--quiet=yes"], ["localhost", "gpsd.lan"],
    ]
    return {"arguments-%02d" % number: "\0".join(words) for number, words in enumerate(command_lines)}


def main():
    for target, seeds in [("decoder", decoder_seeds()), ("json", json_seeds()), ("server", server_seeds()),
                          ("arguments", argument_seeds())]:
        folder = corpus / target
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for name, text in sorted(seeds.items()):
            (folder / name).write_bytes(text.encode())
        print("%s: %d seeds" % (folder.relative_to(root), len(seeds)))


main()
