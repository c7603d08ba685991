"""The CLI's values output (plain.to_jsonable) writes dates, naive datetimes and times, and timedeltas
in the sandbox's lossless ``DT`` form (red-team pass 24's wire tag), so that plain.decode reads
back the same value; aware datetimes (a tzinfo object) stay a named non-plain value."""
import datetime
import json

from matrix import plain


def test_dates_times_and_deltas_round_trip_through_the_values_output():
    values = [
        datetime.date(2024, 2, 29),
        datetime.datetime(1999, 12, 31, 23, 59, 58, 123456),
        datetime.datetime(2021, 11, 7, 1, 30, fold=1),
        datetime.time(13, 5, 9, 7),
        datetime.timedelta(days=-3, seconds=5, microseconds=11),
        [datetime.date(2000, 1, 1), {"k": datetime.timedelta(0)}],
    ]
    for v in values:
        text = json.dumps(plain.to_jsonable(v))
        back = plain.decode(text)
        assert back == v and type(back) is type(v), (v, text)
        if isinstance(v, datetime.datetime):
            assert back.fold == v.fold


def test_an_aware_datetime_stays_named_not_plain():
    v = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
    assert plain.to_jsonable(v) == {"N": "datetime"}
