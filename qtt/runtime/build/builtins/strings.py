"""String functions, Java's ``String.trim()``, and LIKE as ksqlDB's ``LikeEvaluator`` runs it."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as st

from qtt import sqltypes as t
from qtt.plan.ir import expressions as e
from qtt.runtime.build.builtins.java.java_bytes import split_bytes
from qtt.runtime.build.builtins.registry import implements, null_of
from qtt.runtime.spark.spark_types import to_spark


@implements("CONCAT")
def _concat(expr: e.Call, args: Sequence[Column]) -> Column:
    # ksqlDB skips null arguments; Spark's concat would return null.
    if not args:
        return F.lit("")
    empty = F.lit("") if expr.sql_type == t.STRING else F.lit(b"")
    return F.concat(*[F.coalesce(a, empty) for a in args])


@implements("CONCAT_WS")
def _concat_ws(expr: e.Call, args: Sequence[Column]) -> Column:
    # ksqlDB skips null parts and returns null for a null separator. Spark's concat_ws only
    # takes a constant separator, so fold over the non-null parts instead.
    if len(args) < 2:  # ksqlDB's "Function Concat_WS expects at least two input arguments."
        return F.lit(None).cast(to_spark(expr.sql_type))
    separator, parts = args[0], args[1:]
    spark_type = to_spark(expr.sql_type)
    present = F.filter(F.array(*parts), lambda x: x.isNotNull())
    joined = F.aggregate(
        present,
        F.lit(None).cast(spark_type),
        lambda acc, x: F.when(acc.isNull(), x).otherwise(F.concat(acc, separator, x)),
    )
    empty = F.lit("") if expr.sql_type == t.STRING else F.lit(b"")
    return F.when(separator.isNull(), F.lit(None)).otherwise(F.coalesce(joined, empty))


def quote_regex(text: Column) -> Column:
    """``text`` as a Java regex that matches it literally."""
    return F.regexp_replace(text, r"([\\^$.|?*+()\[\]{}])", r"\\$1")


# Java's String.trim() removes every character up to U+0020, not only spaces.
_JAVA_SPACE = r"[\x00-\x20]"


def java_trim(value: Column) -> Column:
    """Java's ``String.trim()``."""
    return F.regexp_replace(value, rf"^{_JAVA_SPACE}+|{_JAVA_SPACE}+$", "")


@implements("TRIM")
def _trim(expr: e.Call, args: Sequence[Column]) -> Column:
    return java_trim(args[0])


@implements("LTRIM")
def _ltrim(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.regexp_replace(args[0], rf"^{_JAVA_SPACE}+", "")


@implements("MD5")
def _md5(expr: e.Call, args: Sequence[Column]) -> Column:
    # DigestUtils.md5Hex(String): the UTF-8 bytes' digest in lower-case hex, as Spark's md5
    return F.md5(args[0])


@implements("RTRIM")
def _rtrim(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.regexp_replace(args[0], rf"{_JAVA_SPACE}+$", "")


# Java strings count UTF-16 code units: a character beyond U+FFFF (an emoji) is two of them,
# where Spark counts it once. LEN, SUBSTRING, LPAD, RPAD and INSTR of a STRING (and the MASK
# functions, text_functions.py) work on its UTF-16 code units.
_UTF16 = "UTF-16BE"


def _utf16(text: Column) -> Column:
    return F.encode(text, _UTF16)


def _from_utf16(units: Column) -> Column:
    return F.decode(units, _UTF16)


def utf16_length(text: Column) -> Column:
    """Java's ``String.length()``: UTF-16 code units."""
    return (F.octet_length(_utf16(text)) / 2).cast("int")


@implements("LEN")
def _len(expr: e.Call, args: Sequence[Column]) -> Column:
    return utf16_length(args[0]) if expr.args[0].result_type == t.STRING else F.octet_length(args[0])


@implements("INITCAP")
def _initcap(expr: e.Call, args: Sequence[Column]) -> Column:
    # ksqlDB lower-cases, then upper-cases the first character of each run of non-whitespace
    # (Java's \s); leading whitespace is dropped. Spark's initcap splits on spaces only.
    # ksqlDB upper-cases part.substring(0, 1), one UTF-16 unit: a word starting beyond U+FFFF
    # starts with a lone high surrogate, which toUpperCase leaves as is.
    words = F.regexp_extract_all(F.lower(args[0]), F.lit(r"[^\s]+\s*"), 0)
    capitalized = F.transform(
        words,
        lambda w: F.when(utf16_length(F.substring(w, 1, 1)) == 2, w).otherwise(
            F.concat(F.upper(F.substring(w, 1, 1)), F.substring(w, 2, 2**31 - 1))
        ),
    )
    return F.array_join(capitalized, "")


@implements("SUBSTRING")
def _substring(expr: e.Call, args: Sequence[Column]) -> Column:
    # ksqlDB: 1-based start, 0 reads as 1, a negative start counts from the end and clamps
    # to the first character; a negative length gives "". Spark's substring differs when a
    # negative start reaches before the first character.
    # Positions count UTF-16 code units in a STRING (Java's String.substring), bytes in BYTES.
    text = expr.args[0].result_type == t.STRING
    value, position = (_utf16(args[0]) if text else args[0]), args[1]
    unit = 2 if text else 1
    length = args[2] if len(args) > 2 else F.lit(2**31 - 1)
    size = F.octet_length(value) / unit
    start = F.when(position < 0, F.greatest(size + position, F.lit(0))).otherwise(
        F.greatest(F.least(position - 1, size), F.lit(0))
    )
    taken = F.greatest(F.least(length, size), F.lit(0))  # units; bounded, so doubling cannot overflow
    if text and len(args) > 2:
        # Substring.getEndIndex adds start and length as Java ints: past 2147483647 the sum
        # wraps negative and the end falls back to the start, so the result is empty.
        taken = F.when(start.cast("long") + length.cast("long") > t.INT_MAX, F.lit(0)).otherwise(taken)
    part = F.substring(value, (start * unit + 1).cast("int"), (taken * unit).cast("int"))
    return F.when(position.isNull() | length.isNull(), F.lit(None)).otherwise(_from_utf16(part) if text else part)


@implements("REPLACE")
def _replace(expr: e.Call, args: Sequence[Column]) -> Column:
    value, old, new = args
    # Java's String.replace("", x) puts x around every character.
    joined = F.call_function("array_join", F.split(value, ""), new)
    around = F.when(value == "", new).otherwise(F.concat(new, joined, new))
    return (
        F.when(old.isNull() | new.isNull(), F.lit(None)).when(old == "", around).otherwise(F.replace(value, old, new))
    )


def _ordinal_index(value: Column, search: Column, occurrence: Column, most: Column) -> Column:
    """commons-lang ``ordinalIndexOf``: 0-based index of the n-th (overlapping) match, or -1.

    ``most`` bounds the matches ``value`` can hold (its length, or more): a larger occurrence
    is not found, and is not walked one by one (Spark's arrays have a size limit).
    """

    def locate(start: Column) -> Column:
        return F.call_function("locate", search, value, start)

    # Each subexpression is used once (nullif/coalesce, not a test and a reuse): INSTR nests
    # this search four times, and every reuse would copy it into the expression Spark analyses.
    found = F.aggregate(
        F.sequence(F.lit(1), F.least(F.greatest(occurrence, F.lit(1)), most + 1)),
        F.lit(0),  # 1-based position of the last match; 0 before the first, -1 when missing
        lambda last, _: F.when(last < 0, last).otherwise(F.coalesce(F.nullif(locate(last + 1), F.lit(0)), F.lit(-1))),
    )
    return F.when(occurrence <= 0, F.lit(-1)).when(search == "", F.lit(0)).otherwise(F.greatest(found - 1, F.lit(-1)))


# INSTR searches a STRING's UTF-16 code units spelled out as text, each as four hex digits and
# a ';': a match can only start at a unit, and positions scale by the width of one.
_UNIT_WIDTH = 5


def _unit_text(text: Column) -> Column:
    return F.regexp_replace(F.hex(_utf16(text)), "(.{4})", "$1;")


@implements("INSTR")
def _instr(expr: e.Call, args: Sequence[Column]) -> Column:
    # Positions count UTF-16 code units, as Java's String.indexOf does.
    position = (args[2] if len(args) > 2 else F.lit(1)).cast("long")  # scaled without overflow
    occurrence = args[3] if len(args) > 3 else F.lit(1)
    width = _UNIT_WIDTH
    scaled = F.when(position > 0, (position - 1) * width + 1).when(position < 0, (position + 1) * width - 1)
    # The search reads its arguments many times: each is computed once, as a field of a
    # lambda's argument, so that the expression holds it once (with every use holding a copy,
    # Spark's analyser took about 2 s per call).
    bound = F.array(
        F.struct(
            _unit_text(args[0]).alias("value"),
            _unit_text(args[1]).alias("search"),
            F.coalesce(scaled, position).alias("start"),
        )
    )
    found = F.transform(bound, lambda x: _instr_in_text(x["value"], x["search"], x["start"], occurrence))
    # 0 (not found) maps to 0: floor(-1 / width) + 1
    return (F.floor((F.get(found, 0) - 1) / width) + 1).cast("int")


def _instr_in_text(value: Column, search: Column, position: Column, occurrence: Column) -> Column:
    # ksqlDB's Instr: 0 (not null) for null arguments; a negative position searches backwards.
    size = F.length(value)

    def find(text: Column, needle: Column, start: Column) -> Column:
        # StringUtils.substring(text, start - 1): a negative start counts from the end.
        offset = F.when(start - 1 < 0, F.greatest(size + start - 1, F.lit(0))).otherwise(start - 1)
        rest = F.substring(text, offset + 1, 2**31 - 1)
        return _ordinal_index(rest, needle, occurrence, size)

    forward = find(value, search, position)
    backward = find(F.reverse(value), F.reverse(search), -position)
    # -1 (no match) becomes null, then 0
    result = F.when(
        position < 0,
        F.coalesce(size + position - F.nullif(backward, F.lit(-1)) - F.length(search) + 2, F.lit(0)),
    ).otherwise(F.coalesce(F.nullif(forward, F.lit(-1)) + position, F.lit(0)))
    # Position and occurrence are Java ints: a null one fails the call, so null.
    return (
        F.when(position.isNull() | occurrence.isNull(), F.lit(None))
        .when(value.isNull() | search.isNull() | (F.abs(position) > size), F.lit(0))
        .otherwise(result)
    )


@implements("ELT")
def _elt(expr: e.Call, args: Sequence[Column]) -> Column:
    # The n-th string (1-based); null when n is out of range.
    position, strings = args[0], args[1:]
    if not strings:
        return null_of(t.STRING)
    return F.try_element_at(F.array(*strings), F.when(position >= 1, position))


@implements("FIELD")
def _field(expr: e.Call, args: Sequence[Column]) -> Column:
    # 1-based position of the first equal string; 0 when absent or when the string is null.
    value, strings = args[0], args[1:]
    if not strings:
        return F.lit(0)
    return F.coalesce(F.array_position(F.array(*strings), value), F.lit(0))


def _pad(pad: Callable[[Column, Column, Column], Column], expr: e.Call, args: Sequence[Column]) -> Column:
    # ksqlDB returns null for a negative length or an empty padding. A STRING pads and
    # truncates in UTF-16 code units, as ksqlDB's StringBuilder does.
    value, length, padding = args
    invalid = (length < 0) | (F.octet_length(padding) == 0)
    if expr.args[0].result_type == t.STRING:
        # new StringBuilder(targetLen + padding.length()): past 2147483647 the Java int sum
        # wraps negative and the constructor throws, so null.
        invalid = invalid | (length.cast("long") + utf16_length(padding) > t.INT_MAX)
        padded = _from_utf16(pad(_utf16(value), length * 2, _utf16(padding)))
    else:
        padded = pad(value, length, padding)
    return F.when(invalid, F.lit(None)).otherwise(padded)


@implements("LPAD")
def _lpad(expr: e.Call, args: Sequence[Column]) -> Column:
    return _pad(F.lpad, expr, args)


@implements("RPAD")
def _rpad(expr: e.Call, args: Sequence[Column]) -> Column:
    return _pad(F.rpad, expr, args)


@implements("SPLIT")
def _split(expr: e.Call, args: Sequence[Column]) -> Column:
    if expr.args[0].result_type == t.BYTES:
        # BytesUtils.split has no Spark equivalent (and a quirk of its own): a Python UDF.
        return F.udf(split_bytes, st.ArrayType(st.BinaryType()), useArrow=True)(args[0], args[1])
    # ksqlDB splits on the literal delimiter; an empty delimiter splits into characters.
    return F.when(args[1] == "", F.split(args[0], "")).otherwise(F.split(args[0], quote_regex(args[1]), -1))


# LikeEvaluator runs Matcher.matches(), the whole value; Spark's rlike finds the regex, where
# "$" would also match before a final line break ("abc\n" LIKE 'abc'), so the end is \z.
_LIKE_END = r"\z"


def like_with_escape(value: Column, pattern: Column, escape: str) -> Column:
    """``value LIKE pattern ESCAPE escape`` for a pattern known only per row.

    Spark's LIKE refuses an escape before an ordinary character, which ksqlDB allows; so
    the pattern is cut into tokens (an escaped character, or one character) and each token
    becomes its piece of a Java regex.
    """
    quoted_escape = re.escape(escape)
    tokens = F.regexp_extract_all(pattern, F.lit(f"(?s)({quoted_escape}.|.)"), 1)

    def piece(token: Column) -> Column:
        literal = F.when(F.length(token) == 2, F.substring(token, 2, 1)).otherwise(token)
        return (
            F.when(token == F.lit(escape), F.lit(None))  # a trailing escape character
            .when(token == "%", F.lit(".*"))
            .when(token == "_", F.lit("."))
            .otherwise(quote_regex(literal))
        )

    pieces = F.transform(tokens, piece)
    valid = F.forall(pieces, lambda p: p.isNotNull())
    regex = F.concat(F.lit("^"), F.array_join(pieces, ""), F.lit(_LIKE_END))
    return F.when(valid, F.regexp_like(value, regex))


def like_regex(pattern: str, escape: str | None) -> str | None:
    """The Java regex for a SQL LIKE pattern, or None when ksqlDB rejects the pattern.

    As ksqlDB's ``LikeEvaluator``: ``%`` is ``.*`` and ``_`` is ``.`` (neither matches a line
    break), the escape character makes the next character literal, and a pattern that ends
    with the escape character is an error.
    """
    out = ["^"]
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if escape is not None and c == escape:
            if i + 1 == len(pattern):
                return None
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if c == "%" else "." if c == "_" else re.escape(c))
        i += 1
    out.append(_LIKE_END)
    return "".join(out)


def dynamic_like_regex(pattern: Column) -> Column:
    """``like_regex`` for a pattern only known per row (no escape character)."""
    quoted = quote_regex(pattern)
    return F.concat(
        F.lit("^"),
        F.replace(F.replace(quoted, F.lit("%"), F.lit(".*")), F.lit("_"), F.lit(".")),
        F.lit(_LIKE_END),
    )
