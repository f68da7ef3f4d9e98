"""When a recurring run fires, against the ScheduledWorkflow controller's own unit tests
(kubeflow/pipelines 7b70c7b95f backend/src/crd/controller/scheduledworkflow/util/
cron_schedule_test.go and periodic_schedule_test.go), each case named by its Go test. Epochs are
whole seconds, UTC, as there. ``None`` is the controller's maxTime / MaxInt64: never.
"""

from __future__ import annotations

import pytest

from kfp_bench.kfp.cron import parse
from kfp_bench.sandbox.kfp_server.cron import ZERO_TIME, Trigger

SECOND, MINUTE, HOUR = 1, 60, 3600
EVERY_MINUTE = parse("0 * * * * * ")  # as written there, trailing space and all


def _cron(start=None, end=None) -> Trigger:
    return Trigger(EVERY_MINUTE, start=start, end=end)


def test_cron_start_date_end_date():
    """TestCronSchedule_getNextScheduledTime_Cron_StartDate_EndDate"""
    t = _cron(10 * HOUR, 11 * HOUR)
    assert t.next_fire(0, 0, 0, True) == 10 * HOUR + MINUTE
    assert t.next_fire(10 * HOUR + 5 * MINUTE, 0, 0, True) == 10 * HOUR + 6 * MINUTE
    assert t.next_fire(13 * HOUR, 0, 0, True) is None


def test_cron_only():
    """TestCronSchedule_getNextScheduledTime_CronOnly"""
    assert _cron().next_fire(10 * HOUR, 0, 0, True) == 10 * HOUR + MINUTE


def test_cron_get_next_scheduled_time():
    """TestCronSchedule_GetNextScheduledTime: the last run, else start_time, else creation."""
    created = 10 * HOUR + 15 * MINUTE
    t = _cron(10 * HOUR + 10 * MINUTE, 11 * HOUR)
    assert t.next_fire(10 * HOUR + 20 * MINUTE, created, 0, True) == 10 * HOUR + 21 * MINUTE
    assert t.next_fire(None, created, 0, True) == 10 * HOUR + 11 * MINUTE
    assert _cron(end=11 * HOUR).next_fire(None, created, 0, True) == created + MINUTE


@pytest.mark.parametrize(
    ("now", "expected"),
    [  # TestCronSchedule_GetNextScheduledTimeNoCatchup, the last run at 10:20
        (10 * HOUR + 20 * MINUTE + 30 * SECOND, 10 * HOUR + 21 * MINUTE),  # not yet time
        (10 * HOUR + 21 * MINUTE, 10 * HOUR + 21 * MINUTE),  # exactly now
        (10 * HOUR + 21 * MINUTE + 30 * SECOND, 10 * HOUR + 21 * MINUTE),  # shortly after
        (10 * HOUR + 30 * MINUTE, 10 * HOUR + 30 * MINUTE),  # behind: the latest only
        (12 * HOUR, 11 * HOUR),  # way behind, past the end time
    ],
)
def test_cron_no_catchup(now, expected):
    t = _cron(10 * HOUR + 10 * MINUTE, 11 * HOUR)
    assert t.next_fire(10 * HOUR + 20 * MINUTE, 10 * HOUR + 15 * MINUTE, now, False) == expected


def test_cron_no_catchup_without_a_last_run():
    """TestCronSchedule_GetNextScheduledTimeNoCatchup, its last two cases."""
    created = 10 * HOUR + 15 * MINUTE
    t = _cron(10 * HOUR + 10 * MINUTE, 11 * HOUR)
    assert t.next_fire(None, created, 0, False) == 10 * HOUR + 11 * MINUTE


def test_periodic_start_date_end_date():
    """TestPeriodicSchedule_getNextScheduledEpoch_StartDate_EndDate"""
    t = Trigger(interval=MINUTE, start=10 * HOUR, end=11 * HOUR)
    assert t.next_fire(0, 0, 0, True) == 10 * HOUR
    assert t.next_fire(10 * HOUR + 5 * MINUTE, 0, 0, True) == 10 * HOUR + 6 * MINUTE
    assert t.next_fire(13 * HOUR, 0, 0, True) is None


def test_periodic_period_only():
    """TestPeriodicSchedule_getNextScheduledEpoch_PeriodOnly"""
    assert Trigger(interval=MINUTE).next_fire(10 * HOUR, 0, 0, True) == 10 * HOUR + MINUTE


def test_periodic_get_next_scheduled_epoch():
    """TestPeriodicSchedule_GetNextScheduledEpoch"""
    created = 10 * HOUR + 15 * MINUTE
    t = Trigger(interval=60, start=10 * HOUR + 10 * MINUTE, end=11 * HOUR)
    assert t.next_fire(10 * HOUR + 20 * MINUTE, created, 0, True) == 10 * HOUR + 21 * MINUTE
    assert t.next_fire(None, created, 0, True) == 10 * HOUR + 11 * MINUTE
    assert Trigger(interval=60, end=11 * HOUR).next_fire(None, created, 0, True) == created + 60


@pytest.mark.parametrize(
    ("now", "expected"),
    [  # TestPeriodicSchedule_GetNextScheduledEpochNoCatchup, the last run at 10:20
        (10 * HOUR + 20 * MINUTE + 30 * SECOND, 10 * HOUR + 21 * MINUTE),
        (10 * HOUR + 21 * MINUTE, 10 * HOUR + 21 * MINUTE),
        (10 * HOUR + 21 * MINUTE + 30 * SECOND, 10 * HOUR + 21 * MINUTE),
        (10 * HOUR + 30 * MINUTE, 10 * HOUR + 30 * MINUTE),  # behind: now
        (12 * HOUR, 11 * HOUR),  # way behind: the end time
    ],
)
def test_periodic_no_catchup(now, expected):
    t = Trigger(interval=60, start=10 * HOUR + 10 * MINUTE, end=11 * HOUR)
    assert t.next_fire(10 * HOUR + 20 * MINUTE, 10 * HOUR + 15 * MINUTE, now, False) == expected


def test_no_trigger_is_one_run_at_creation():
    """scheduled_workflow.go getNextScheduledEpochForOneTimeRun"""
    assert Trigger().next_fire(None, 1000, 5000, True) == 1000
    assert Trigger().next_fire(1000, 1000, 5000, True) is None


def test_a_cron_that_never_matches():
    """robfig's Next answers the zero time: the controller (cron_schedule.go:97-109) takes it as
    due at once with catch-up; without, its loop at :116 never ends, so nothing fires."""
    t = Trigger(parse("0 0 0 30 Feb ?"))
    assert t.next_fire(None, 1000, 5000, True) == ZERO_TIME
    assert t.next_fire(None, 1000, 5000, False) is None


def test_every_without_catchup_jumps_to_the_latest():
    """The no-catch-up loop of cron_schedule.go:114-123, for @every, in one step."""
    t = Trigger(parse("@every 1s"), start=0)
    assert t.next_fire(None, 0, 10**9, False) == 10**9


@pytest.mark.parametrize(
    ("doc", "message"),
    [  # server/api_converter.go:2085-2100 and the trigger's JSON
        ({"cron_schedule": {"cron": "0 3 * *"}}, "Schedule cron is not a supported format("
         "https://godoc.org/github.com/robfig/cron). Error: Expected 5 to 6 fields, found 4"),
        ({"cron_schedule": {}}, "Error: Empty spec string"),
        ({"periodic_schedule": {"interval_second": "0"}}, "Found invalid period schedule "
         "interval 0. Set at interval to least 1 second"),
        ({"periodic_schedule": {"interval_second": "1.5"}}, "whole number of seconds"),
        ({"cron_schedule": {"cron": "@daily"}, "periodic_schedule": {}}, "not both"),
    ],
)  # fmt: skip
def test_refused_triggers(doc, message):
    with pytest.raises(ValueError) as info:
        Trigger.from_api(doc)
    assert message in str(info.value)


def test_triggers_as_the_api_answers_them():
    """toApiTrigger: int64 as a string, times from whole seconds, {} for none."""
    start = "2026-01-02T03:04:05.900Z"
    cron = Trigger.from_api({"cron_schedule": {"cron": "@every 1h", "start_time": start}})
    assert cron.start == 1767323045 and cron.to_api()["cron_schedule"]["cron"] == "@every 1h"
    assert Trigger.from_api({"periodic_schedule": {"interval_second": 5}}).to_api() == {
        "periodic_schedule": {"interval_second": "5"}
    }
    assert Trigger.from_api(None).to_api() == Trigger.from_api({}).to_api() == {}
