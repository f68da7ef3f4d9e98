"""KFP's cron, as its ScheduledWorkflow controller reads it: robfig/cron v1.2.0's ``cron.Parse``.

This module owns which cron strings KFP takes and when they fire. kubeflow/pipelines 7b70c7b95f
pins robfig/cron v1.2.0 (go.mod:42); the API server checks a recurring run's cron with its
``cron.Parse`` (server/api_converter.go:2089) and the controller computes fire times with it
(crd/controller/scheduledworkflow/util/cron_schedule.go:84). The grammar below is ported from
robfig/cron v1.2.0 ``parser.go`` (errors word for word, as the API server quotes them); the times
are computed by croniter over the parsed fields. What v1's ``Parse`` takes:

* 6 fields ``second minute hour day-of-month month day-of-week``, or 5 with the day of week left
  out (``*``): SECONDS FIRST, so a Unix cron ``0 3 * * *`` means minute 3 of every hour;
* each field a comma list of ``*`` / ``?`` / ``n`` / ``a-b``, each with an optional ``/step``
  (``n/step`` is ``n-max/step``); month and weekday names (``jan``, ``MON``); Sunday is 0 only;
* ``@yearly`` ``@annually`` ``@monthly`` ``@weekly`` ``@daily`` ``@midnight`` ``@hourly``, and
  ``@every <Go duration>`` (under 1 s is 1 s, else whole seconds: constantdelay.go).

Days: if day-of-month or day-of-week holds a star (``*``, ``?``, ``*/2``) both must match, else
either (spec.go ``dayMatches``). ``L``, ``W``, ``#``, ``7`` and 7-field crons are refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from croniter import croniter
from croniter.croniter import CroniterBadDateError

UTC = ZoneInfo("UTC")
LABELS = ("second", "minute", "hour", "day-of-month", "month", "day-of-week")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
# spec.go: the bounds and names of each field
_BOUNDS = (
    (0, 59, {}),
    (0, 59, {}),
    (0, 23, {}),
    (1, 31, {}),
    (1, 12, {m: i + 1 for i, m in enumerate(_MONTHS)}),
    (0, 6, {d: i for i, d in enumerate(_DAYS)}),
)
_DESCRIPTORS = {  # parser.go parseDescriptor: "" is the field's minimum, "*" all of it
    "@yearly": ("0", "0", "0", "1", "1", "*"),
    "@annually": ("0", "0", "0", "1", "1", "*"),
    "@monthly": ("0", "0", "0", "1", "*", "*"),
    "@weekly": ("0", "0", "0", "*", "*", "0"),
    "@daily": ("0", "0", "0", "*", "*", "*"),
    "@midnight": ("0", "0", "0", "*", "*", "*"),
    "@hourly": ("0", "0", "*", "*", "*", "*"),
}
# Go's unicode.IsSpace, which strings.Fields splits on
_SPACE = re.compile("[\t\n\v\f\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+")
_UNITS = {"ns": 1, "us": 10**3, "\u00b5s": 10**3, "\u03bcs": 10**3, "ms": 10**6,
          "s": 10**9, "m": 60 * 10**9, "h": 3600 * 10**9}  # fmt: skip
_MAX_NS = 2**63 - 1


class CronError(ValueError):
    """A cron that robfig/cron v1 ``Parse`` refuses; ``reason`` is robfig's own error text."""

    def __init__(self, text: str, reason: str, where: str = "") -> None:
        self.text, self.reason, self.detail = text, reason, f"{where}{reason}"
        super().__init__(f"cron {text!r}: {self.detail}")


@dataclass(frozen=True, slots=True)
class Schedule:
    """A parsed cron: the values of each field and whether it held a star, or ``@every``."""

    text: str
    fields: tuple[frozenset[int], ...] = ()
    stars: tuple[bool, ...] = ()
    every: int = 0  # seconds, for @every

    def next(self, after: datetime) -> datetime | None:
        """robfig's ``Next``: the first fire time after ``after`` (whole seconds, in its time
        zone); None where robfig answers the zero time (nothing within five years)."""
        start = after.replace(microsecond=0)
        if self.every:
            return start + timedelta(seconds=self.every)
        plan = self._croniter_plan()
        if plan is None:
            return None
        expr, day_or = plan
        try:
            found = croniter(expr, start, day_or=day_or, second_at_beginning=True,
                             max_years_between_matches=7).get_next(datetime)  # fmt: skip
        except CroniterBadDateError:
            return None
        # spec.go Next: the search stops past the year after the first candidate, plus 5
        limit = (start + timedelta(seconds=1)).year + 5
        return found if found.year <= limit else None

    def next_epoch(self, after: int) -> int | None:
        """``next`` over epoch seconds, in UTC: KFP's controller reads crons in UTC unless an
        install sets CRON_SCHEDULE_TIMEZONE (manifests' pipeline-install-config.yaml:60), and
        croniter and robfig differ on a local time that daylight saving skips."""
        found = self.next(datetime.fromtimestamp(after, UTC))
        return None if found is None else int(found.timestamp())

    def _croniter_plan(self) -> tuple[str, bool] | None:
        """The same schedule as a croniter expression (explicit values, seconds first) and its
        day_or; None if it can never fire (a field of ``,`` alone)."""
        sec, minute, hour, dom, month, dow = self.fields
        if not (sec and minute and hour and month):
            return None
        text = [_values(f, i) for i, f in enumerate(self.fields)]
        if self.stars[3] or self.stars[5]:  # both must match
            if not (dom and dow):
                return None
            return " ".join(text), False
        if not (dom or dow):
            return None
        if not dom or not dow or len(dom) == 31 or len(dow) == 7:
            # either may match: one side alone decides (a full side: every day)
            if len(dom) == 31 or len(dow) == 7:
                text[3] = text[5] = "*"
            else:
                text[3 if not dom else 5] = "*"
            return " ".join(text), False
        return " ".join(text), True


def _values(values: frozenset[int], index: int) -> str:
    lo, hi, _ = _BOUNDS[index]
    return "*" if len(values) == hi - lo + 1 else ",".join(map(str, sorted(values)))


def parse(text: str) -> Schedule:
    """Parse ``text`` as robfig/cron v1.2.0 ``cron.Parse`` does; raise CronError if it refuses."""
    if not text:
        raise CronError(text, "Empty spec string")
    if text[0] == "@":
        return _descriptor(text)
    parts = [p for p in _SPACE.split(text) if p]
    if not 5 <= len(parts) <= 6:
        raise CronError(text, f"Expected 5 to 6 fields, found {len(parts)}: {text}")
    parts = parts + ["*"] * (6 - len(parts))  # the day of week is optional
    fields, stars = [], []
    for i, part in enumerate(parts):
        try:
            values, star = _field(part, _BOUNDS[i])
        except ValueError as exc:
            raise CronError(text, str(exc), f"{LABELS[i]} field {part!r}: ") from None
        fields.append(values)
        stars.append(star)
    return Schedule(text, tuple(fields), tuple(stars))


def _descriptor(text: str) -> Schedule:
    if text in _DESCRIPTORS:
        parts = _DESCRIPTORS[text]
        pairs = [_field(p, b) for p, b in zip(parts, _BOUNDS, strict=True)]
        return Schedule(text, tuple(v for v, _ in pairs), tuple(s for _, s in pairs))
    if text.startswith("@every "):
        try:
            ns = go_duration(text[len("@every ") :])
        except ValueError as exc:
            raise CronError(text, f"Failed to parse duration {text}: {exc}") from None
        # constantdelay.go Every: under a second is a second; else truncated to whole seconds
        return Schedule(text, every=max(ns, 10**9) // 10**9)
    raise CronError(text, f"Unrecognized descriptor: {text}")


def _field(part: str, bounds: tuple) -> tuple[frozenset[int], bool]:
    """parser.go getField: a comma list of ranges (empty items skipped, as FieldsFunc does)."""
    values: set[int] = set()
    star = False
    for expr in (e for e in part.split(",") if e):
        got, is_star = _range(expr, bounds)
        values |= got
        star = star or is_star
    return frozenset(values), star


def _range(expr: str, bounds: tuple) -> tuple[set[int], bool]:
    """parser.go getRange, check for check in the same order; ``bounds``: (min, max, names)."""
    lo, hi, names = bounds
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    star = low_and_high[0] in ("*", "?")
    if star:  # robfig reads nothing after the star's hyphen: "*-5" is "*"
        start, end = lo, hi
    else:
        start = _int_or_name(low_and_high[0], names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _int_or_name(low_and_high[1], names)
        else:
            raise ValueError(f"Too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _atoi(range_and_step[1])
        if len(low_and_high) == 1:  # "N/step" is "N-max/step"
            end = hi
    else:
        raise ValueError(f"Too many slashes: {expr}")
    if start < lo:
        raise ValueError(f"Beginning of range ({start}) below minimum ({lo}): {expr}")
    if end > hi:
        raise ValueError(f"End of range ({end}) above maximum ({hi}): {expr}")
    if start > end:
        raise ValueError(f"Beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise ValueError(f"Step of range should be a positive number: {expr}")
    return set(range(start, end + 1, step)), star


def _int_or_name(expr: str, names: dict[str, int]) -> int:
    return names[expr.lower()] if expr.lower() in names else _atoi(expr)


def _atoi(expr: str) -> int:
    """parser.go mustParseInt: Go's strconv.Atoi (ASCII digits, one optional sign), >= 0."""
    if not re.fullmatch(r"[+-]?[0-9]+", expr) or not -(2**63) <= int(expr) < 2**63:
        why = "invalid syntax" if not re.fullmatch(r"[+-]?[0-9]+", expr) else "value out of range"
        raise ValueError(f'Failed to parse int from {expr}: strconv.Atoi: parsing "{expr}": {why}')
    num = int(expr)
    if num < 0:
        raise ValueError(f"Negative number ({num}) not allowed: {expr}")
    return num


def go_duration(text: str) -> int:
    """Go's time.ParseDuration, in nanoseconds: ``1h30m``, ``1.5s``, ``-2m``, ``0``."""
    bad = ValueError(f'time: invalid duration "{text}"')
    s, neg = text, False
    if s and s[0] in "+-":
        neg, s = s[0] == "-", s[1:]
    if s == "0":
        return 0
    if not s:
        raise bad
    total = 0
    while s:
        m = re.match(r"([0-9]*)(?:\.([0-9]*))?", s)
        whole, frac = m.group(1), m.group(2)
        if not whole and not frac:
            raise bad
        s = s[m.end() :]
        unit_m = re.match(r"[^0-9.]*", s)
        unit = unit_m.group(0)
        if not unit:
            raise ValueError(f'time: missing unit in duration "{text}"')
        if unit not in _UNITS:
            raise ValueError(f'time: unknown unit "{unit}" in duration "{text}"')
        s = s[unit_m.end() :]
        scale = _UNITS[unit]
        value = int(whole or 0) * scale
        if value > 2**63:
            raise bad
        if frac:  # Go keeps about 18 digits of a fraction and scales it in float64
            frac = frac[:18]
            value += int(float(int(frac)) * (scale / 10 ** len(frac)))
        total += value
        if total > 2**63:
            raise bad
    if not neg and total > _MAX_NS:
        raise bad
    return -total if neg else total


def unix_cron_trap(text: str) -> str | None:
    """What KFP does with a 5-field cron, and the 6-field cron meant; None for any other text.

    robfig v1 reads 5 fields as ``second minute hour day-of-month month``: a Unix cron
    ``0 3 * * *`` (03:00 daily) fires on KFP at minute 3 of every hour."""
    parts = [p for p in _SPACE.split(text) if p]
    if text.startswith("@") or len(parts) != 5:
        return None
    return (
        "5 fields: KFP (robfig/cron v1) reads them as 'second minute hour "
        f"day-of-month month', not as a Unix cron's 'minute hour day-of-month month day-of-week'; "
        f"for the Unix meaning give 6 fields, seconds first: {'0 ' + ' '.join(parts)!r}"
    )


FORMAT = "'second minute hour day-of-month month [day-of-week]', e.g. '0 0 3 * * *' (03:00 daily)"


def check_user_cron(text: str, now: int) -> Schedule:
    """A user's cron for a KFP recurring run, refused (CronError, naming the fix) where KFP would
    refuse it or would not do what it says: a Unix 5-field cron, an ``@every`` that KFP rounds,
    a date that never comes (KFP's controller would fire it at once, over and over)."""
    trap = unix_cron_trap(text)
    if trap:
        raise CronError(text, trap)
    try:
        schedule = parse(text)
    except CronError as exc:
        raise CronError(text, f"{exc.detail}; KFP's cron is {FORMAT}") from None
    if schedule.every:
        ns = go_duration(text[len("@every ") :])
        if ns != schedule.every * 10**9:
            every = schedule.every
            raise CronError(
                text,
                f"KFP runs it every {every} s (robfig/cron keeps whole seconds, at least 1); "
                f"give '@every {every}s'",
            )
    elif schedule.next_epoch(now) is None:
        raise CronError(
            text,
            "never fires (no such time within five years); give a date that exists, "
            "e.g. day-of-month 1-28 for every month",
        )
    return schedule
