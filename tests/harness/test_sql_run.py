"""Running SQL tests on Spark: verdicts never go green by mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from qtt.harness.sqltests.files import load_sql_tests
from qtt.harness.sqltests.run import run_sql_tests
from qtt.harness.status import Status

pytestmark = pytest.mark.spark

TESTS = """
--@test: a wrong value fails
CREATE STREAM a (id INT KEY, x INT) WITH (kafka_topic='a', value_format='JSON');
CREATE STREAM b AS SELECT id, x * 2 AS twice FROM a;
INSERT INTO a (id, x) VALUES (1, 4);
ASSERT VALUES b (id, twice) VALUES (1, 9);

--@test: an expected error that never comes fails
--@expected.error: java.lang.AssertionError
CREATE STREAM a (id INT KEY, x INT) WITH (kafka_topic='a', value_format='JSON');
CREATE STREAM b AS SELECT id, x * 2 AS twice FROM a;
INSERT INTO a (id, x) VALUES (1, 4);
ASSERT VALUES b (id, twice) VALUES (1, 8);

--@test: an expected error of another kind fails
--@expected.error: io.confluent.ksql.util.KsqlException
CREATE STREAM a (id INT KEY, x INT) WITH (kafka_topic='a', value_format='JSON');
CREATE STREAM b AS SELECT id, x * 2 AS twice FROM a;
INSERT INTO a (id, x) VALUES (1, 4);
ASSERT VALUES b (id, twice) VALUES (1, 7);

--@test: an upgrade resumes the old query's state
CREATE STREAM a (id INT KEY, x INT) WITH (kafka_topic='a', value_format='JSON');
CREATE TABLE c AS SELECT id, COUNT(*) AS n FROM a GROUP BY id;
INSERT INTO a (id, x) VALUES (1, 4);
CREATE OR REPLACE TABLE c AS SELECT id, COUNT(*) AS n, AS_VALUE(id) AS again FROM a GROUP BY id;
INSERT INTO a (id, x) VALUES (1, 5);
ASSERT VALUES c (id, n) VALUES (1, 1);
ASSERT VALUES c (id, n, again) VALUES (1, 2, 1);

--@test: nothing to run
-- a comment only
"""


def test_verdicts_follow_what_the_records_show(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "verdicts.sql"
    path.write_text(TESTS)
    results = run_sql_tests(load_sql_tests(path), lambda: spark)
    statuses = {r.case: (r.status, r.reason) for r in results}
    assert statuses["a wrong value fails"][0] == Status.FAILED
    assert "Expected: (ID=1, TWICE=9) vs. Actual: (ID=1, TWICE=8)" in statuses["a wrong value fails"][1]
    assert statuses["an expected error that never comes fails"][0] == Status.FAILED
    assert statuses["an expected error of another kind fails"][0] == Status.FAILED
    assert "AssertionFailedError" in statuses["an expected error of another kind fails"][1]
    assert statuses["an upgrade resumes the old query's state"] == (Status.PASSED, "")
    assert statuses["nothing to run"][0] == Status.SKIPPED
