"""Spark implementations of ksqlDB's text, regular-expression, mask and collection-construction functions.

Registered with :func:`qtt.runtime.build.builtins.registry.implements`; the signatures are in
:mod:`qtt.plan.functions.text_signatures`. Where ksqlDB's UDF calls a Java library method that the
JVM under Spark also has (commons-lang3, ``java.lang``, ``java.net``), the column calls that
very method with Spark's ``try_reflect``: a Java exception becomes null, as ksqlDB logs the
error and emits null. Where a regular expression is a constant, it is compiled once at build
time by the driver's JVM, because Spark compiles a constant pattern before any row is seen
and an invalid one would fail the query instead of giving null.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark import SparkContext
from pyspark.sql import Column
from pyspark.sql import functions as F

from qtt import sqltypes as t
from qtt.plan.ir import expressions as e
from qtt.runtime.build.builtins.java.java_regex import mark_group, participation_pattern
from qtt.runtime.build.builtins.registry import implements, null_of
from qtt.runtime.build.builtins.strings import quote_regex, utf16_length
from qtt.runtime.spark.session import is_connect
from qtt.runtime.spark.spark_types import to_spark


def java_call(cls: str, method: str, *args: Column) -> Column:
    """The static Java method ``cls.method(args)`` as text; null where it throws."""
    return F.call_function("try_reflect", F.lit(cls), F.lit(method), *args)


def _any_null(*cols: Column) -> Column:
    result = cols[0].isNull()
    for c in cols[1:]:
        result = result | c.isNull()
    return result


# ---------------------------------------------------------------------------- CHR, UUID


@implements("CHR")
def _chr(expr: e.Call, args: Sequence[Column]) -> Column:
    value = args[0]
    if expr.args[0].result_type == t.STRING:
        # ksqlDB: only text of 6 or more characters starting with \u, unescaped as Java source.
        plausible = (F.length(value) >= 6) & value.startswith("\\u")
        return F.when(plausible, java_call("org.apache.commons.lang3.StringEscapeUtils", "unescapeJava", value))
    return java_call("java.lang.Character", "toString", value)


@implements("UUID")
def _uuid(expr: e.Call, args: Sequence[Column]) -> Column:
    if not args:
        return F.call_function("uuid")
    # UUID(bytes): 16 bytes as java.util.UUID prints them (lower-case hex, 8-4-4-4-12); other lengths are null
    digits = F.lower(F.hex(args[0]))
    groups = [F.substring(digits, start, length) for start, length in ((1, 8), (9, 4), (13, 4), (17, 4), (21, 12))]
    return F.when(F.octet_length(args[0]) == 16, F.concat_ws("-", *groups))


# ---------------------------------------------------------------------------- masks

_MASK_DEFAULTS = ("X", "x", "n", "-")


def _mask_chars(text: Column, masks: Sequence[Column], masked: object) -> Column:
    """Mask each UTF-16 code unit of ``text`` whose 0-based index passes ``masked(i, length)``.

    Character classes are Java's ``Character.getType`` (the regex classes \\p{Lu}, \\p{Ll},
    \\p{Nd} are defined by it); a null mask character keeps that class unmasked.

    Masker walks the UTF-16 code units: a character beyond U+FFFF is masked by its class at
    its first unit, and its second unit (a surrogate, another class) by the other mask; a null
    element of the walk stands for that second unit.
    """
    upper, lower, digit, other = masks
    characters = F.regexp_extract_all(text, F.lit("(?s)."), 0)
    units = F.flatten(
        F.transform(
            characters,
            lambda c: F.when(utf16_length(c) == 2, F.array(c, F.lit(None).cast("string"))).otherwise(F.array(c)),
        )
    )
    size = F.size(units)

    def one(c: Column, i: Column) -> Column:
        replaced = (
            F.when(c.isNull(), F.coalesce(other, F.lit("")))
            .when(c.rlike(r"\p{Lu}"), F.coalesce(upper, c))
            .when(c.rlike(r"\p{Ll}"), F.coalesce(lower, c))
            .when(c.rlike(r"\p{Nd}"), F.coalesce(digit, c))
            .otherwise(F.coalesce(other, c))
        )
        return F.when(masked(i, size), replaced).otherwise(F.coalesce(c, F.lit("")))  # type: ignore[operator]

    return F.array_join(F.transform(units, one), "")


def _masks(args: Sequence[Column], first: int) -> tuple[list[Column], Column]:
    if len(args) > first:
        masks = list(args[first : first + 4])
        # Masker.getMaskCharacter: a mask must be one character (KsqlException otherwise).
        bad = F.lit(False)
        for m in masks:
            bad = bad | (m.isNotNull() & (utf16_length(m) != 1))
        return masks, bad
    return [F.lit(c) for c in _MASK_DEFAULTS], F.lit(False)


@implements("MASK")
def _mask(expr: e.Call, args: Sequence[Column]) -> Column:
    masks, bad = _masks(args, 1)
    return F.when(~bad, _mask_chars(args[0], masks, lambda i, n: F.lit(True)))


def _counted_mask(args: Sequence[Column], masked: object) -> Column:
    text, count = args[0], args[1]
    masks, bad = _masks(args, 2)
    # numChars is a Java int: null fails the call; a negative one is KsqlFunctionException.
    invalid = bad | count.isNull() | (count < 0)
    return F.when(~invalid, _mask_chars(text, masks, lambda i, n: masked(i, n, count)))  # type: ignore[operator]


@implements("MASK_KEEP_LEFT")
def _mask_keep_left(expr: e.Call, args: Sequence[Column]) -> Column:
    return _counted_mask(args, lambda i, n, k: i >= k)


@implements("MASK_KEEP_RIGHT")
def _mask_keep_right(expr: e.Call, args: Sequence[Column]) -> Column:
    return _counted_mask(args, lambda i, n, k: i < n - k)


@implements("MASK_LEFT")
def _mask_left(expr: e.Call, args: Sequence[Column]) -> Column:
    return _counted_mask(args, lambda i, n, k: i < k)


@implements("MASK_RIGHT")
def _mask_right(expr: e.Call, args: Sequence[Column]) -> Column:
    return _counted_mask(args, lambda i, n, k: i >= n - k)


# ---------------------------------------------------------------------------- regular expressions


def _constant_groups(expr: e.Expression, column: Column) -> int | None:
    """The group count of a literal Java regex (-1 if it does not compile), None if not literal.

    The JVM is the one ``column`` belongs to, never the thread's active session: which session
    is active depends on what ran before in the process, and the plan (its topology) must not.
    """
    if not isinstance(expr, e.Literal):
        return None
    if expr.value is None:
        return -1
    context = SparkContext._active_spark_context
    if context is None or is_connect(column):  # Spark Connect: no JVM here; the per-row check decides
        return None
    try:
        return int(context._jvm.java.util.regex.Pattern.compile(str(expr.value)).matcher("").groupCount())  # type: ignore[union-attr]
    except Exception:  # py4j wraps the PatternSyntaxException
        return -1


def _group_problem(expr: e.Call, pattern: Column, text: Column, group: Column) -> Column | None:
    """A per-row "this call throws in Java" condition for (pattern, group), or None if none can."""
    groups = _constant_groups(expr.args[0], pattern)
    if groups is not None:
        if groups < 0:
            return F.lit(True)
        if len(expr.args) < 3:
            return None
        if isinstance(expr.args[2], e.Literal):
            index = expr.args[2].value
            return F.lit(index is None or not 0 <= int(index) <= groups)  # type: ignore[call-overload]
    # Matcher.group(n) throws for a group the pattern lacks; so does "$n" in a replacement,
    # which RegExUtils applies only where the pattern matches, as ksqlDB's find() does.
    probe = java_call(
        "org.apache.commons.lang3.RegExUtils", "replaceFirst", text, pattern, F.concat(F.lit("$"), group.cast("string"))
    )
    return probe.isNull() | group.isNull()


def _regexp_args(expr: e.Call, args: Sequence[Column]) -> tuple[Column, Column, Column, Column]:
    # ksqlDB's REGEXP_EXTRACT(_ALL) take the pattern first.
    pattern, text = args[0], args[1]
    group = args[2] if len(args) > 2 else F.lit(0)
    problem = _group_problem(expr, pattern, text, group)
    invalid = _any_null(pattern, text) | (problem if problem is not None else F.lit(False))
    return pattern, text, group, invalid


def _literal_pattern_and_group(expr: e.Call) -> tuple[str, int] | None:
    if len(expr.args) < 3:
        return None
    pattern, group = expr.args[0], expr.args[2]
    if not (isinstance(pattern, e.Literal) and isinstance(group, e.Literal)):
        return None
    if not (isinstance(pattern.value, str) and isinstance(group.value, int)):
        return None
    return pattern.value, group.value


def _took_part(expr: e.Call, text: Column) -> Column | None:
    """Whether the group REGEXP_EXTRACT reads took part in the first match (Java's group(n) is
    null where it did not, Spark's ""); None where unknown: a pattern or group not literal, or
    a pattern :func:`participation_pattern` is not sure of."""
    literal = _literal_pattern_and_group(expr)
    probe = participation_pattern(*literal) if literal else None
    if probe is None:
        return None
    return java_call("java.util.regex.Pattern", "matches", F.lit(probe), text) == "true"


def _null_where_no_part(expr: e.Call, pattern: Column, text: Column, values: Column) -> Column:
    """REGEXP_EXTRACT_ALL's ``values`` with null for each match its group took no part in.

    Java's ``replaceAll`` runs the ``find()`` loop REGEXP_EXTRACT_ALL runs, with the group's
    empty marker (:func:`mark_group`) and, after the pattern, a backreference to it or else a
    character next to the match's end: each match becomes a NUL, that character (none where
    the group took part) and a NUL. (Lookarounds keep what they capture even where the engine
    backtracks, so only this last step may capture in one.) An empty text, next to which there
    is no character, has one match at most: the first match's test of REGEXP_EXTRACT decides.
    """
    literal = _literal_pattern_and_group(expr)
    marked = mark_group(*literal) if literal else None
    groups = _constant_groups(expr.args[0], pattern)
    if literal is None or marked is None or groups is None or groups < 0:
        return values
    group = literal[1]
    after = f"(?:\\{group + 1}|(?<=([\\s\\S]))|(?=([\\s\\S]))|)"
    flags_text = java_call(
        "org.apache.commons.lang3.RegExUtils",
        "replaceAll",
        text,
        F.lit(f"(?:{marked}){after}"),
        F.lit(f"\x00${groups + 2}${groups + 3}\x00"),
    )
    flags = F.regexp_extract_all(flags_text, F.lit("\x00([^\x00]?)\x00"), 1)
    each = F.transform(values, lambda v, i: F.when(F.get(flags, i) == "", v))
    # (try_reflect is nondeterministic: Spark refuses to run it inside a lambda.)
    took_part = _took_part(expr, text)
    nulls = F.array_repeat(F.lit(None).cast("string"), F.size(values))
    first_only = values if took_part is None else F.when(took_part, values).otherwise(nulls)
    return (
        F.when(text.contains("\x00"), values)  # a NUL of its own: unknown
        .when(text == "", first_only)
        .otherwise(each)
    )


@implements("REGEXP_EXTRACT")
def _regexp_extract(expr: e.Call, args: Sequence[Column]) -> Column:
    # Matcher.find(): null when nothing matches (Spark's regexp_extract gives "").
    pattern, text, group, invalid = _regexp_args(expr, args)
    found = F.call_function("regexp_like", text, pattern)
    extracted = F.call_function("regexp_extract", text, pattern, group)
    took_part = _took_part(expr, text)
    if took_part is not None:
        extracted = F.when(took_part, extracted)
    return F.when(~invalid & found, extracted)


@implements("REGEXP_EXTRACT_ALL")
def _regexp_extract_all(expr: e.Call, args: Sequence[Column]) -> Column:
    pattern, text, group, invalid = _regexp_args(expr, args)
    values = F.call_function("regexp_extract_all", text, pattern, group)
    return F.when(~invalid, _null_where_no_part(expr, pattern, text, values))


@implements("REGEXP_REPLACE")
def _regexp_replace(expr: e.Call, args: Sequence[Column]) -> Column:
    # String.replaceAll, with its "$n" and "\" rules and its exceptions, called as is.
    text, pattern, replacement = args
    replaced = java_call("org.apache.commons.lang3.RegExUtils", "replaceAll", text, pattern, replacement)
    return F.when(~_any_null(text, pattern, replacement), replaced)


@implements("REGEXP_SPLIT_TO_ARRAY")
def _regexp_split_to_array(expr: e.Call, args: Sequence[Column]) -> Column:
    text, pattern = args
    groups = _constant_groups(expr.args[1], pattern)
    if groups is not None and groups < 0:
        return null_of(expr.sql_type)
    matches_empty = java_call("java.util.regex.Pattern", "matches", pattern, F.lit(""))
    pieces = F.split(text, pattern, -1)
    # A pattern that matches "" splits with Pattern.split (trailing empty strings dropped);
    # any other with Guava's Splitter, which keeps them, as Spark's split(-1) does.
    last = F.aggregate(
        F.sequence(F.lit(1), F.greatest(F.size(pieces), F.lit(1))),
        F.lit(0),
        lambda acc, i: F.when(F.get(pieces, i - 1) != "", i).otherwise(acc),
    )
    trimmed = F.when(last == 0, F.array(text)).otherwise(F.slice(pieces, 1, last))
    return (
        F.when(_any_null(text, pattern) | matches_empty.isNull(), F.lit(None))
        .when(pattern == "", F.split(text, ""))
        .when(matches_empty == "true", trimmed)
        .otherwise(pieces)
    )


@implements("SPLIT_TO_MAP")
def _split_to_map(expr: e.Call, args: Sequence[Column]) -> Column:
    # Guava's Splitter: entries split on the literal delimiter, empty ones dropped, entries
    # without the key-value delimiter dropped, the text after a second one ignored; the last
    # value of a repeated key wins.
    text, entry_delim, kv_delim = args
    entries = F.filter(
        F.split(text, quote_regex(entry_delim), -1),
        lambda x: (x != "") & x.contains(kv_delim),
    )
    pairs = F.transform(entries, lambda x: F.split(x, quote_regex(kv_delim), -1))
    keys = F.transform(pairs, lambda p: F.get(p, 0))
    values = F.transform(pairs, lambda p: F.get(p, 1))
    invalid = (
        _any_null(text, entry_delim, kv_delim) | (entry_delim == "") | (kv_delim == "") | (entry_delim == kv_delim)
    )
    return F.when(~invalid, _last_wins_map(keys, values))


def _last_wins_map(keys: Column, values: Column) -> Column:
    """A map from parallel arrays; a repeated key takes its last value, a null key is dropped."""
    indexed = F.transform(keys, lambda k, i: F.struct(k.alias("k"), F.get(values, i).alias("v"), i.alias("i")))
    # array_contains is null, not false, when a later key is null: that must not drop the entry.
    kept = F.filter(
        indexed,
        lambda x: (
            x["k"].isNotNull()
            & ~F.coalesce(F.array_contains(F.slice(keys, x["i"] + 2, F.size(keys) + 1), x["k"]), F.lit(False))
        ),
    )
    return F.map_from_arrays(F.transform(kept, lambda x: x["k"]), F.transform(kept, lambda x: x["v"]))


# ---------------------------------------------------------------------------- collections


@implements("AS_MAP")
def _as_map(expr: e.Call, args: Sequence[Column]) -> Column:
    # A HashMap: the last value of a repeated key wins; missing values are null. A null key
    # list fails the call (null), a null value list only when a key reads it: no keys is {}.
    keys, values = args
    no_values = F.array().cast(to_spark(expr.args[1].result_type))
    readable = keys.isNotNull() & (values.isNotNull() | (F.size(keys) == 0))
    return F.when(readable, _last_wins_map(keys, F.coalesce(values, no_values)))


@implements("SLICE")
def _slice(expr: e.Call, args: Sequence[Column]) -> Column:
    # List.subList(from - 1, to): null bounds mean the ends; out of range is null.
    array, first, last = args
    start = F.coalesce(first - 1, F.lit(0))
    end = F.coalesce(last, F.size(array))
    out_of_range = (start < 0) | (end > F.size(array)) | (start > end)
    return F.when(array.isNotNull() & ~out_of_range, F.slice(array, start + 1, end - start))


# ---------------------------------------------------------------------------- bytes and encodings

_HEX = r"^([0-9a-fA-F]{2})*$"


def _ascii_bytes(text: Column) -> Column:
    # String.getBytes(US_ASCII): each unmappable character (a code point) becomes '?'.
    return F.encode(F.regexp_replace(text, r"[^\x00-\x7F]", "?"), "UTF-8")


def _ascii_text(data: Column) -> Column:
    # new String(bytes, US_ASCII): each byte above 0x7F becomes U+FFFD.
    return F.regexp_replace(F.decode(data, "ISO-8859-1"), r"[\x80-\xFF]", "\ufffd")


def _utf8_text(data: Column) -> Column:
    # new String(bytes, UTF_8): malformed input becomes U+FFFD (Spark's decode would fail).
    return F.call_function("make_valid_utf8", data.cast("string"))


def _encoding(expr: e.Expression) -> str | None:
    value = expr.value if isinstance(expr, e.Literal) else None
    return value.lower() if isinstance(value, str) else None


def _to_bytes(text: Column, encoding: str | None) -> Column | None:
    """ksqlDB's BytesUtils.decode: hex (DatatypeConverter: either case), utf8, ascii, base64 (basic decoder)."""
    if encoding == "hex":
        return F.when(text.rlike(_HEX), F.unhex(text))
    if encoding == "utf8":
        return F.encode(text, "UTF-8")
    if encoding == "ascii":
        return _ascii_bytes(text)
    if encoding == "base64":
        # Java's basic decoder refuses any character outside the alphabet; Spark's skips whitespace.
        return F.when(~text.rlike(r"[^A-Za-z0-9+/=]"), _base64_decode(text))
    return None


def _base64_decode(text: Column) -> Column:
    return F.call_function("try_to_binary", text, F.lit("base64"))


def _lenient_base64(text: Column) -> Column:
    """commons-codec's ``Base64.decodeBase64``, which never fails.

    '-' and '_' read as '+' and '/', other characters outside the alphabet are skipped, the
    first '=' ends the data, and a last lone character (too few bits for a byte) is dropped.
    """
    chars = F.substring_index(F.regexp_replace(F.translate(text, "-_", "+/"), r"[^A-Za-z0-9+/=]", ""), "=", 1)
    size = F.length(chars)
    return _base64_decode(F.substring(chars, F.lit(1), F.when(size % 4 == 1, size - 1).otherwise(size)))


def _from_bytes(data: Column, encoding: str | None) -> Column | None:
    """ksqlDB's BytesUtils.encode: hex in upper case, base64 as Java's basic encoder (one line)."""
    if encoding == "hex":
        return F.hex(data)
    if encoding == "utf8":
        return _utf8_text(data)
    if encoding == "ascii":
        return _ascii_text(data)
    if encoding == "base64":
        return one_line_base64(data)
    return None


def one_line_base64(data: Column) -> Column:
    # Spark's base64 may break lines every 76 characters, as Java's MIME encoder does.
    return F.regexp_replace(F.base64(data), "\r\n", "")


@implements("TO_BYTES")
def _to_bytes_fn(expr: e.Call, args: Sequence[Column]) -> Column:
    # An unknown encoding throws for every row: null.
    result = _to_bytes(args[0], _encoding(expr.args[1]))
    return result if result is not None else null_of(t.BYTES)


@implements("FROM_BYTES")
def _from_bytes_fn(expr: e.Call, args: Sequence[Column]) -> Column:
    result = _from_bytes(args[0], _encoding(expr.args[1]))
    return result if result is not None else null_of(t.STRING)


# ENCODE looks its converter up by the two names run together (so 'hexa', 'scii' works, and
# no pair of equal encodings does).
_ENCODE_PAIRS = {
    a + b: (a, b) for a in ("hex", "utf8", "ascii", "base64") for b in ("hex", "utf8", "ascii", "base64") if a != b
}


def _hex_strip(text: Column) -> Column:
    # Encode.hexStrip: "0x..." loses its prefix (a "0" added for an odd count of digits),
    # "X'...'" its quotes.
    digits = F.substring(text, 3, 2**31 - 1)
    return (
        F.when(text.rlike(r"^0x.*$"), F.when(F.length(text) % 2 != 0, F.concat(F.lit("0"), digits)).otherwise(digits))
        .when(text.rlike(r"^[xX]'.*'$"), F.substring(digits, F.lit(1), F.length(text) - 3))
        .otherwise(text)
    )


@implements("ENCODE")
def _encode(expr: e.Call, args: Sequence[Column]) -> Column:
    text = args[0]
    first, second = _encoding(expr.args[1]), _encoding(expr.args[2])
    pair = _ENCODE_PAIRS.get((first or "\0") + (second or "\0"))
    if pair is None:
        return null_of(t.STRING)
    source, target = pair
    if source == "hex":
        stripped = _hex_strip(text)
        data = F.when(stripped.rlike(_HEX), F.unhex(stripped))
    elif source == "base64":
        data = _lenient_base64(text)
    else:
        data = _to_bytes(text, source)  # type: ignore[assignment]
    if target == "hex":
        return F.lower(F.hex(data))
    if target == "base64":
        return one_line_base64(data)  # commons-codec does not wrap lines
    return _utf8_text(data) if target == "utf8" else _ascii_text(data)


def _number_from_bytes(expr: e.Call, args: Sequence[Column], size: int, cls: str, parse: str) -> Column:
    data = args[0]
    order = F.upper(args[1]) if len(args) > 1 else F.lit("BIG_ENDIAN")
    digits = F.hex(data)
    swapped = F.array_join(F.reverse(F.regexp_extract_all(digits, F.lit(".."), 0)), "")
    ordered = F.when(order == "BIG_ENDIAN", digits).when(order == "LITTLE_ENDIAN", swapped)
    number = java_call(f"java.lang.{cls}", parse, ordered, F.lit(16))
    # ksqlDB: a value of the wrong size or an unknown byte order is an error, so null.
    return F.when(F.octet_length(data) == size, number)


@implements("INT_FROM_BYTES")
def _int_from_bytes(expr: e.Call, args: Sequence[Column]) -> Column:
    return _number_from_bytes(expr, args, 4, "Integer", "parseUnsignedInt").cast("int")


@implements("BIGINT_FROM_BYTES")
def _bigint_from_bytes(expr: e.Call, args: Sequence[Column]) -> Column:
    return _number_from_bytes(expr, args, 8, "Long", "parseUnsignedLong").cast("bigint")


@implements("INT_FROM_BOOLEAN")
def _int_from_boolean(expr: e.Call, args: Sequence[Column]) -> Column:
    return args[0].cast("int")  # 1 for true, 0 for false, null for null


@implements("DOUBLE_FROM_BYTES")
def _double_from_bytes(expr: e.Call, args: Sequence[Column]) -> Column:
    bits = _number_from_bytes(expr, args, 8, "Long", "parseUnsignedLong").cast("bigint")
    return java_call("java.lang.Double", "longBitsToDouble", bits).cast("double")
