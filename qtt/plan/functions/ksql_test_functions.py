"""The functions ksqlDB's own test suite registers, which are not part of ksqlDB.

ksqlDB's QTT files call UDFs, UDAFs and UDTFs that its test classpath adds
(``ksqldb-engine/src/test/java/io/confluent/ksql/function/{udf,udaf}``). A case that calls
one tests ksqlDB's function framework, not the dialect, so qtt skips it and says why instead
of failing it as an unknown function. ``WHENCONDITION``, ``WHENRESULT`` and ``BAD_UDF`` are test
UDFs too, but qtt runs them (they prove CASE evaluates lazily, and that an expression that throws
is null), so they are in the signature table.
"""

from __future__ import annotations

from qtt.errors import UnsupportedFeatureError

#: Upper-case name -> the kind of function ksqlDB's test suite registers under it.
KSQL_TEST_FUNCTIONS: dict[str, str] = {
    "BAD_TEST_UDF": "UDF",
    "TEST_UDF": "UDF",
    "TEST_UDTF": "UDTF",
    "BAD_TEST_UDTF": "UDTF",
    "THROWING_UDTF": "UDTF",
    "TEST_UDAF": "UDAF",
    "BAD_TEST_UDAF": "UDAF",
    "MULTI_ARG": "UDAF",
    "FOUR_ARG": "UDAF",
    "FIVE_ARG": "UDAF",
    "VAR_ARG": "UDAF",
    "MID_VAR_ARG": "UDAF",
    "GENERIC_VAR_ARG": "UDAF",
    "OBJ_COL_ARG": "UDAF",
}


def check_not_test_function(name: str) -> None:
    """Raise a skip if ``name`` is one of ksqlDB's test-only functions.

    Raises:
        UnsupportedFeatureError: naming the function and saying it is ksqlDB's test-only one.
    """
    kind = KSQL_TEST_FUNCTIONS.get(name.upper())
    if kind is not None:
        msg = f"ksqlDB's test-only {kind} {name.upper()} (registered by ksqlDB's own test suite, not a ksqlDB function)"
        raise UnsupportedFeatureError(msg)
