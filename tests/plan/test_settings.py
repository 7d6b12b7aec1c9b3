"""ksqlDB's settings as its KsqlConfig reads them: Kafka's ConfigDef types and messages."""

from __future__ import annotations

import decimal

import pytest

from qtt.errors import ConfigError, StatementError
from qtt.plan.settings import check_settings, enabled, pseudo_columns
from qtt.plan.statements import plan_statements
from qtt.sql import parse_statements


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"ksql.suppress.enabled": "sometimes"},
            "Invalid value sometimes for configuration ksql.suppress.enabled: "
            "Expected value to be either true or false",
        ),
        (
            {"ksql.cast.strings.preserve.nulls": 0},
            "Invalid value 0 for configuration ksql.cast.strings.preserve.nulls: "
            "Expected value to be either true or false",
        ),
        (
            {"ksql.suppress.buffer.size.bytes": "plenty"},
            "Invalid value plenty for configuration ksql.suppress.buffer.size.bytes: Not a number of type LONG",
        ),
        (
            {"ksql.query.persistent.active.limit": True},
            "Invalid value true for configuration ksql.query.persistent.active.limit: "
            "Expected value to be a 32-bit integer, but it was a java.lang.Boolean",
        ),
        (
            {"ksql.query.persistent.active.limit": 2**40},
            f"Invalid value {2**40} for configuration ksql.query.persistent.active.limit: "
            "Expected value to be a 32-bit integer, but it was a java.lang.Long",
        ),
        (
            {"ksql.query.persistent.active.limit": "3000000000"},
            "Invalid value 3000000000 for configuration ksql.query.persistent.active.limit: Not a number of type INT",
        ),
        (
            {"ksql.internal.topic.replicas": 3},
            "Invalid value 3 for configuration ksql.internal.topic.replicas: "
            "Expected value to be a 16-bit integer, but it was a java.lang.Integer",
        ),
        (
            {"ksql.output.topic.name.prefix": 7},
            "Invalid value 7 for configuration ksql.output.topic.name.prefix: "
            "Expected value to be a string, but it was a java.lang.Integer",
        ),
        (
            {"ksql.persistence.wrap.single.values": ["a", 1.0]},
            "Invalid value [a, 1.0] for configuration ksql.persistence.wrap.single.values: "
            "Expected value to be either true or false",
        ),
    ],
)
def test_a_value_its_type_cannot_read_is_kafkas_config_exception(settings, message):
    with pytest.raises(ConfigError) as raised:
        check_settings(settings)
    assert raised.value.message == message


@pytest.mark.parametrize(
    "settings",
    [
        {"ksql.suppress.enabled": " FALSE "},
        {"ksql.suppress.enabled": True},
        {"ksql.query.persistent.active.limit": " -12 "},
        {"ksql.suppress.buffer.size.bytes": 2**40},
        {"ksql.internal.topic.replicas": "3"},
        {"ksql.no.such.setting": "anything", "ksql.functions.collect_list.limit": "x"},
        {"ksql.suppress.enabled": None},
    ],
)
def test_values_their_type_reads_and_unknown_settings_pass(settings):
    check_settings(settings)


def test_the_first_bad_setting_in_ksqldbs_order_is_reported():
    with pytest.raises(ConfigError) as raised:
        check_settings({"ksql.suppress.enabled": "x", "ksql.service.id": 1})
    assert "ksql.service.id" in raised.value.message


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, True), (True, True), (False, False), (" FALSE ", False), ("True", True), ("false", False)],
)
def test_a_boolean_setting_reads_trimmed_in_any_case(value, expected):
    settings = {} if value is None else {"ksql.suppress.enabled": value}
    assert enabled(settings, "ksql.suppress.enabled", True) is expected


def test_rowpartition_and_rowoffset_can_be_switched_off():
    assert set(pseudo_columns({})) == {"ROWTIME", "ROWPARTITION", "ROWOFFSET"}
    assert set(pseudo_columns({"ksql.rowpartition.rowoffset.enabled": "false"})) == {"ROWTIME"}


def test_a_fraction_reads_as_javas_double():
    with pytest.raises(ConfigError) as raised:
        check_settings({"ksql.suppress.buffer.size.bytes": decimal.Decimal("2.5")})
    assert raised.value.message == (
        "Invalid value 2.5 for configuration ksql.suppress.buffer.size.bytes: "
        "Expected value to be a 64-bit integer, but it was a java.lang.Double"
    )


def test_a_set_of_a_value_its_type_cannot_read_is_the_statements_error():
    # ksqlDB's PropertyOverrider rethrows the ConfigException's words as a KsqlStatementException
    statements = parse_statements("SET 'ksql.suppress.enabled' = 'maybe';")
    with pytest.raises(StatementError) as raised:
        plan_statements(statements)
    assert raised.value.message == (
        "Invalid value maybe for configuration ksql.suppress.enabled: Expected value to be either true or false"
    )
    assert not isinstance(raised.value, ConfigError)
