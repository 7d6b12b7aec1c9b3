"""Names as ksqlDB prints them: bare only when its lexer reads an upper-case identifier."""

import pytest

from qtt.sql.formatter import KSQL_RESERVED_WORDS, format_expr, format_identifier
from qtt.sql.parser import RESERVED_WORDS, parse_expression


@pytest.mark.parametrize(
    ("name", "printed"),
    [
        ("RIDER", "RIDER"),
        ("KSQL_COL_0", "KSQL_COL_0"),
        ("_", "_"),
        ("A@B", "A@B"),
        ("1ST", "1ST"),  # a digit first, then more: still an identifier
        ("42", "`42`"),  # a number
        ("1E5", "`1E5`"),  # a number with an exponent
        ("rider", "`rider`"),  # not upper case
        ("FAHRRÄDER", "`FAHRRÄDER`"),  # a letter outside A-Z
        ("END", "`END`"),  # reserved
        ("SELECT", "`SELECT`"),
        ("MINUTES", "`MINUTES`"),  # a plural unit is reserved, the singular is not
        ("MINUTE", "MINUTE"),
        ("KEY", "KEY"),  # keywords of the nonReserved rule stay bare
        ("PARTITION", "PARTITION"),
        ("WITH`TICK", "`WITH`TICK`"),  # FormatOptions.escape doubles no backtick
    ],
)
def test_a_name_is_quoted_where_ksqldb_quotes_it(name: str, printed: str) -> None:
    assert format_identifier(name) == printed


def test_the_reserved_words_are_keywords_outside_the_non_reserved_rule() -> None:
    assert {"END", "SELECT", "SIZE", "TUMBLING", "WITHIN"} <= KSQL_RESERVED_WORDS
    assert not {"KEY", "EMIT", "DATE", "TIMESTAMP", "STRUCT", "ID", "SOURCE"} & KSQL_RESERVED_WORDS
    assert len(KSQL_RESERVED_WORDS) == 86
    assert RESERVED_WORDS <= KSQL_RESERVED_WORDS  # the words qtt's parser never reads as names


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        ("-(-a)", "- -A"),  # a space keeps two minus signs from reading as a comment
        ("-(-7)", "- -7"),
        ("+a", "+A"),  # ksqlDB keeps a unary plus (ArithmeticUnaryExpression, sign PLUS)
        ("0.00000025", "2.5E-7"),  # BigDecimal.toString
        ("007.50", "7.50"),
        ("-0.0", "0.0"),
        ("UNIX_TIMESTAMP(*)", "UNIX_TIMESTAMP()"),  # the parser keeps no star
        ("count()", "COUNT(*)"),  # the formatter prints one for any COUNT without argument
        ("`len`(a)", "`len`(A)"),  # a quoted function name keeps its case
        ("TRANSFORM(xs, `v` => `v` + `w`)", "TRANSFORM(XS, (v) => (v + `w`))"),  # a lambda variable is bare
    ],
)
def test_an_expression_is_printed_as_ksqldb_prints_it(text: str, printed: str) -> None:
    assert format_expr(parse_expression(text)) == printed
