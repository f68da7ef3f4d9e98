"""KFP's cron against robfig/cron v1.2.0's own tests (the version kubeflow/pipelines 7b70c7b95f
pins, go.mod:42). Each table cites its Go test; cases are copied as they stand at tag v1.2.0
(commit b41be1df), times converted from Go's layouts. Go's ``getTime`` parses a time without a
zone as UTC, which is also the zone KFP's controller uses by default (manifests: pipeline-install-
config cronScheduleTimezone "UTC"), so the cases run in UTC unless they name their own offset.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from kfp_bench.kfp import cron
from kfp_bench.kfp.cron import CronError, parse


def _t(text: str) -> datetime | None:
    """Go's getTime: 'Mon Jan 2 15:04[:05[.000]] 2006' in UTC, or an ISO time with its offset
    (spec_test.go reads those in America/New_York, for the DST cases)."""
    if not text:
        return None
    for layout in ("%a %b %d %H:%M %Y", "%a %b %d %H:%M:%S %Y", "%a %b %d %H:%M:%S.%f %Y"):
        try:
            return datetime.strptime(text, layout).replace(tzinfo=UTC)
        except ValueError:
            continue
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S%z").astimezone(ZoneInfo("America/New_York"))


# spec_test.go TestActivation (v1.2.0): does the schedule fire at exactly this time?
ACTIVATION = [
    ("Mon Jul 9 15:00 2012", "0 0/15 * * *", True),
    ("Mon Jul 9 15:45 2012", "0 0/15 * * *", True),
    ("Mon Jul 9 15:40 2012", "0 0/15 * * *", False),
    ("Mon Jul 9 15:05 2012", "0 5/15 * * *", True),
    ("Mon Jul 9 15:20 2012", "0 5/15 * * *", True),
    ("Mon Jul 9 15:50 2012", "0 5/15 * * *", True),
    ("Sun Jul 15 15:00 2012", "0 0/15 * * Jul", True),
    ("Sun Jul 15 15:00 2012", "0 0/15 * * Jun", False),
    ("Sun Jul 15 08:30 2012", "0 30 08 ? Jul Sun", True),
    ("Sun Jul 15 08:30 2012", "0 30 08 15 Jul ?", True),
    ("Mon Jul 16 08:30 2012", "0 30 08 ? Jul Sun", False),
    ("Mon Jul 16 08:30 2012", "0 30 08 15 Jul ?", False),
    ("Mon Jul 9 15:00 2012", "@hourly", True),
    ("Mon Jul 9 15:04 2012", "@hourly", False),
    ("Mon Jul 9 15:00 2012", "@daily", False),
    ("Mon Jul 9 00:00 2012", "@daily", True),
    ("Mon Jul 9 00:00 2012", "@weekly", False),
    ("Sun Jul 8 00:00 2012", "@weekly", True),
    ("Sun Jul 8 01:00 2012", "@weekly", False),
    ("Sun Jul 8 00:00 2012", "@monthly", False),
    ("Sun Jul 1 00:00 2012", "@monthly", True),
    ("Sun Jul 15 00:00 2012", "0 * * 1,15 * Sun", True),
    ("Fri Jun 15 00:00 2012", "0 * * 1,15 * Sun", True),
    ("Wed Aug 1 00:00 2012", "0 * * 1,15 * Sun", True),
    ("Sun Jul 15 00:00 2012", "0 * * * * Mon", False),
    ("Sun Jul 15 00:00 2012", "0 * * */10 * Sun", False),
    ("Mon Jul 9 00:00 2012", "0 * * 1,15 * *", False),
    ("Sun Jul 15 00:00 2012", "0 * * 1,15 * *", True),
    ("Sun Jul 15 00:00 2012", "0 * * */2 * Sun", True),
]


@pytest.mark.parametrize(("when", "spec", "fires"), ACTIVATION)
def test_activation(when, spec, fires):
    at = _t(when)
    assert (parse(spec).next(at - timedelta(seconds=1)) == at) is fires


# spec_test.go TestNext (v1.2.0), the cases in UTC; "" is robfig's zero time (None here).
NEXT = [
    ("Mon Jul 9 14:45 2012", "0 0/15 * * *", "Mon Jul 9 15:00 2012"),
    ("Mon Jul 9 14:59 2012", "0 0/15 * * *", "Mon Jul 9 15:00 2012"),
    ("Mon Jul 9 14:59:59 2012", "0 0/15 * * *", "Mon Jul 9 15:00 2012"),
    ("Mon Jul 9 15:45 2012", "0 20-35/15 * * *", "Mon Jul 9 16:20 2012"),
    ("Mon Jul 9 23:46 2012", "0 */15 * * *", "Tue Jul 10 00:00 2012"),
    ("Mon Jul 9 23:45 2012", "0 20-35/15 * * *", "Tue Jul 10 00:20 2012"),
    ("Mon Jul 9 23:35:51 2012", "15/35 20-35/15 * * *", "Tue Jul 10 00:20:15 2012"),
    ("Mon Jul 9 23:35:51 2012", "15/35 20-35/15 1/2 * *", "Tue Jul 10 01:20:15 2012"),
    ("Mon Jul 9 23:35:51 2012", "15/35 20-35/15 10-12 * *", "Tue Jul 10 10:20:15 2012"),
    ("Mon Jul 9 23:35:51 2012", "15/35 20-35/15 1/2 */2 * *", "Thu Jul 11 01:20:15 2012"),
    ("Mon Jul 9 23:35:51 2012", "15/35 20-35/15 * 9-20 * *", "Wed Jul 10 00:20:15 2012"),
    ("Mon Jul 9 23:35:51 2012", "15/35 20-35/15 * 9-20 Jul *", "Wed Jul 10 00:20:15 2012"),
    ("Mon Jul 9 23:35 2012", "0 0 0 9 Apr-Oct ?", "Thu Aug 9 00:00 2012"),
    ("Mon Jul 9 23:35 2012", "0 0 0 */5 Apr,Aug,Oct Mon", "Mon Aug 6 00:00 2012"),
    ("Mon Jul 9 23:35 2012", "0 0 0 */5 Oct Mon", "Mon Oct 1 00:00 2012"),
    ("Mon Jul 9 23:35 2012", "0 0 0 * Feb Mon", "Mon Feb 4 00:00 2013"),
    ("Mon Jul 9 23:35 2012", "0 0 0 * Feb Mon/2", "Fri Feb 1 00:00 2013"),
    ("Mon Dec 31 23:59:45 2012", "0 * * * * *", "Tue Jan 1 00:00:00 2013"),
    ("Mon Jul 9 23:35 2012", "0 0 0 29 Feb ?", "Mon Feb 29 00:00 2016"),
    ("Mon Jul 9 23:35 2012", "0 0 0 30 Feb ?", ""),
    ("Mon Jul 9 23:35 2012", "0 0 0 31 Apr ?", ""),
]
# TestNext's daylight-saving cases (America/New_York) are left out: KFP's controller reads crons
# in UTC unless an install sets CRON_SCHEDULE_TIMEZONE, and the local server always uses UTC.
# (Tried: croniter fires a local time that spring-forward skips at 03:00 the same day, where
# robfig goes on to the next day; the fall-back cases agree.)


@pytest.mark.parametrize(("when", "spec", "expected"), NEXT)
def test_next(when, spec, expected):
    assert parse(spec).next(_t(when)) == _t(expected)


# spec_test.go TestNextWithTz (v1.2.0): a fixed +05:30 zone, the time read in that zone.
IST = timezone(timedelta(hours=5, minutes=30))


@pytest.mark.parametrize(
    ("when", "spec", "expected"),
    [
        ("2016-01-03T13:09:03", "0 14 14 * * *", "2016-01-03T14:14:00"),
        ("2016-01-03T04:09:03", "0 14 14 * * ?", "2016-01-03T14:14:00"),
        ("2016-01-03T14:09:03", "0 14 14 * * *", "2016-01-03T14:14:00"),
        ("2016-01-03T14:00:00", "0 14 14 * * ?", "2016-01-03T14:14:00"),
    ],
)
def test_next_with_tz(when, spec, expected):
    at = datetime.fromisoformat(when).replace(tzinfo=IST)
    assert parse(spec).next(at) == datetime.fromisoformat(expected).replace(tzinfo=IST)


# constantdelay_test.go TestConstantDelayNext (v1.2.0): Go durations written as @every specs.
CONSTANT_DELAY = [
    ("Mon Jul 9 14:45 2012", "15m50ns", "Mon Jul 9 15:00 2012"),
    ("Mon Jul 9 14:59 2012", "15m", "Mon Jul 9 15:14 2012"),
    ("Mon Jul 9 14:59:59 2012", "15m", "Mon Jul 9 15:14:59 2012"),
    ("Mon Jul 9 15:45 2012", "35m", "Mon Jul 9 16:20 2012"),
    ("Mon Jul 9 23:46 2012", "14m", "Tue Jul 10 00:00 2012"),
    ("Mon Jul 9 23:45 2012", "35m", "Tue Jul 10 00:20 2012"),
    ("Mon Jul 9 23:35:51 2012", "44m24s", "Tue Jul 10 00:20:15 2012"),
    ("Mon Jul 9 23:35:51 2012", "25h44m24s", "Thu Jul 11 01:20:15 2012"),
    ("Mon Jul 9 23:35 2012", f"{91 * 24}h25m", "Thu Oct 9 00:00 2012"),
    ("Mon Dec 31 23:59:45 2012", "15s", "Tue Jan 1 00:00:00 2013"),
    ("Mon Jul 9 14:45 2012", "15m50ns", "Mon Jul 9 15:00 2012"),
    ("Mon Jul 9 14:45:00 2012", "15ms", "Mon Jul 9 14:45:01 2012"),
    ("Mon Jul 9 14:45:00.005 2012", "15m", "Mon Jul 9 15:00 2012"),
    ("Mon Jul 9 14:45:00.005 2012", "15m50ns", "Mon Jul 9 15:00 2012"),
]


@pytest.mark.parametrize(("when", "delay", "expected"), CONSTANT_DELAY)
def test_constant_delay_next(when, delay, expected):
    assert parse(f"@every {delay}").next(_t(when)) == _t(expected)


def _bits(mask: int) -> set[int]:
    return {i for i in range(63) if mask >> i & 1}


STAR = 1 << 63
# parser_test.go TestRange (v1.2.0): (expr, min, max, expected bits, error)
RANGES = [
    ("5", 0, 7, 1 << 5, ""),
    ("0", 0, 7, 1 << 0, ""),
    ("7", 0, 7, 1 << 7, ""),
    ("5-5", 0, 7, 1 << 5, ""),
    ("5-6", 0, 7, 1 << 5 | 1 << 6, ""),
    ("5-7", 0, 7, 1 << 5 | 1 << 6 | 1 << 7, ""),
    ("5-6/2", 0, 7, 1 << 5, ""),
    ("5-7/2", 0, 7, 1 << 5 | 1 << 7, ""),
    ("5-7/1", 0, 7, 1 << 5 | 1 << 6 | 1 << 7, ""),
    ("*", 1, 3, 1 << 1 | 1 << 2 | 1 << 3 | STAR, ""),
    ("*/2", 1, 3, 1 << 1 | 1 << 3 | STAR, ""),
    ("5--5", 0, 0, 0, "Too many hyphens"),
    ("jan-x", 0, 0, 0, "Failed to parse int from"),
    ("2-x", 1, 5, 0, "Failed to parse int from"),
    ("*/-12", 0, 0, 0, "Negative number"),
    ("*//2", 0, 0, 0, "Too many slashes"),
    ("1", 3, 5, 0, "below minimum"),
    ("6", 3, 5, 0, "above maximum"),
    ("5-3", 3, 5, 0, "beyond end of range"),
    ("*/0", 0, 0, 0, "should be a positive number"),
]


@pytest.mark.parametrize(("expr", "lo", "hi", "bits", "error"), RANGES)
def test_range(expr, lo, hi, bits, error):
    if error:
        with pytest.raises(ValueError, match=error):
            cron._range(expr, (lo, hi, {}))
        return
    values, star = cron._range(expr, (lo, hi, {}))
    assert (values, star) == (_bits(bits), bool(bits & STAR))


@pytest.mark.parametrize(
    ("expr", "bits"),  # parser_test.go TestField (v1.2.0), bounds 1..7
    [("5", 1 << 5), ("5,6", 1 << 5 | 1 << 6), ("5,6,7", 1 << 5 | 1 << 6 | 1 << 7),
     ("1,5-7/2,3", 1 << 1 | 1 << 5 | 1 << 7 | 1 << 3)],
)  # fmt: skip
def test_field(expr, bits):
    assert cron._field(expr, (1, 7, {})) == (frozenset(_bits(bits)), False)


ALL = (range(60), range(24), range(1, 32), range(1, 13), range(7))
# parser_test.go TestParse (v1.2.0), and the descriptors of parser.go parseDescriptor
PARSED = [
    ("* 5 * * * *", (range(60), {5}, *ALL[1:]), (True, False, True, True, True, True)),
    ("@yearly", ({0}, {0}, {0}, {1}, {1}, ALL[4]), (False,) * 5 + (True,)),
    ("@annually", ({0}, {0}, {0}, {1}, {1}, ALL[4]), (False,) * 5 + (True,)),
    ("@monthly", ({0}, {0}, {0}, {1}, *ALL[3:]), (False,) * 4 + (True, True)),
    ("@weekly", ({0}, {0}, {0}, ALL[2], ALL[3], {0}), (False,) * 3 + (True, True, False)),
    ("@daily", ({0}, {0}, {0}, *ALL[2:]), (False,) * 3 + (True,) * 3),
    ("@midnight", ({0}, {0}, {0}, *ALL[2:]), (False,) * 3 + (True,) * 3),
    ("@hourly", ({0}, {0}, *ALL[1:]), (False,) * 2 + (True,) * 4),
]


@pytest.mark.parametrize(("spec", "fields", "stars"), PARSED)
def test_parse(spec, fields, stars):
    got = parse(spec)
    assert got.fields == tuple(frozenset(f) for f in fields) and got.stars == stars


def test_parse_every():
    """parser_test.go TestParse '@every 5m' (v1.2.0); constantdelay.go Every: whole seconds."""
    assert parse("@every 5m").every == 300
    assert parse("@every 1h30m").every == 5400
    assert parse("@every 1.9s").every == 1  # truncated, as Every does
    assert parse("@every 0").every == parse("@every -5m").every == 1  # under 1 s is 1 s


@pytest.mark.parametrize(
    ("spec", "error"),
    [  # parser_test.go TestParse and spec_test.go TestErrors (v1.2.0)
        ("* 5 j * * *", "Failed to parse int from"),
        ("@every Xm", "Failed to parse duration"),
        ("@unrecognized", "Unrecognized descriptor"),
        ("* * * *", "Expected 5 to 6 fields"),
        ("", "Empty spec string"),
        ("xyz", "Expected 5 to 6 fields"),
        ("60 0 * * *", "above maximum"),
        ("0 60 * * *", "above maximum"),
        ("0 0 * * XYZ", "Failed to parse int from"),
        # and what v1 refuses that other crons take
        ("0 0 0 L * *", "Failed to parse int from"),
        ("0 0 0 * * 7", "above maximum"),
        ("0 0 0 * * MON#2", "Failed to parse int from"),
        ("0 0 0 * * * 2030", "Expected 5 to 6 fields"),
        ("@DAILY", "Unrecognized descriptor"),
        ("@every 5", "missing unit"),
        ("@every 5d", 'unknown unit "d"'),
        ("@every  5m", "invalid duration"),
        ("0 0 0 * jun mon-fri-sat", "Too many hyphens"),
    ],
)
def test_errors(spec, error):
    with pytest.raises(CronError, match=error) as info:
        parse(spec)
    assert error in info.value.reason and str(info.value).startswith(f"cron {spec!r}: ")


def test_what_v1_takes_beyond_the_obvious():
    """parser.go quirks that KFP inherits: '?' anywhere, '*-x' is '*', '+5', empty list items,
    names in any case, 5 fields with the weekday optional (seconds still first)."""
    assert parse("? ? ? ? ? ?").fields == parse("* * * * * *").fields
    assert parse("*-5 0 0 * * *").fields[0] == frozenset(range(60))
    assert parse("+5 0 0 * * *").fields[0] == {5}
    assert parse("1,,2 0 0 * * *").fields[0] == {1, 2}
    assert parse("0 0 0 * jAn MoN").fields[4:] == ({1}, {1})
    assert parse("0 3 * * *").fields == parse("0 3 * * * *").fields
    # a field of ',' alone holds nothing: Parse takes it, Next never fires (robfig's zero time)
    assert parse(", 0 0 * * *").next(datetime(2012, 7, 9, tzinfo=UTC)) is None


def test_nothing_past_five_years_is_found():
    """spec.go Next: no time in the five years after the start's year is robfig's zero time."""
    leap = parse("0 0 0 29 Feb ?")
    assert leap.next(datetime(2099, 3, 1, tzinfo=UTC)) == datetime(2104, 2, 29, tzinfo=UTC)
    assert leap.next(datetime(2098, 3, 1, tzinfo=UTC)) is None  # 2104 > 2098 + 5


def test_days_match_as_robfig_without_a_star():
    """spec.go dayMatches: with no star either day field may match, a full one always does."""
    at = datetime(2012, 7, 9, 23, 35, tzinfo=UTC)  # a Monday
    assert parse("0 0 0 1-31 * 3").next(at) == datetime(2012, 7, 10, tzinfo=UTC)
    assert parse("0 0 0 1,15 * 0-6").next(at) == datetime(2012, 7, 10, tzinfo=UTC)
    assert parse("0 0 0 , * 3").next(at) == datetime(2012, 7, 11, tzinfo=UTC)
    assert parse("0 0 0 15 * ,").next(at) == datetime(2012, 7, 15, tzinfo=UTC)
    assert parse("0 0 0 */2 * ,").next(at) is None  # a star: both must match


def test_a_unix_cron_is_named_with_the_cron_meant():
    msg = cron.unix_cron_trap("0 3 * * *")
    assert "second minute hour" in msg and "'0 0 3 * * *'" in msg
    assert cron.unix_cron_trap("0 0 3 * * *") is None and cron.unix_cron_trap("@daily") is None


NOW = int(datetime(2026, 12, 1, tzinfo=UTC).timestamp())


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("0 3 * * *", "cron '0 3 * * *': 5 fields: KFP (robfig/cron v1) reads them as 'second "
         "minute hour day-of-month month'"),
        ("0 0 25 * * *", "cron '0 0 25 * * *': hour field '25': End of range (25) above maximum "
         "(23): 25; KFP's cron is 'second minute hour"),
        ("@every 1.5s", "KFP runs it every 1 s"),
        ("@every 100ms", "give '@every 1s'"),
        ("0 0 0 30 2 *", "never fires"),
    ],
)  # fmt: skip
def test_a_users_cron_is_refused_where_kfp_would_surprise(spec, message):
    with pytest.raises(CronError) as info:
        cron.check_user_cron(spec, NOW)
    assert str(info.value).startswith(message) or message in str(info.value)


def test_a_users_cron_that_kfp_reads_as_written_passes():
    for spec in ("0 0 3 * * *", "@daily", "@every 1h30m", "0 0 9 ? * MON-FRI"):
        assert cron.check_user_cron(spec, NOW).text == spec
