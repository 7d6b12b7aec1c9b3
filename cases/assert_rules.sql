-- What ksqlDB's SQL-test runner (its AssertExecutor and SqlTestExecutor) does with ASSERT
-- statements and test directives: see docs/reference/sql-tests.md.

----------------------------------------------------------------------------------------------------
--@test: a full source assertion holds with the default key format
----------------------------------------------------------------------------------------------------
CREATE STREAM scans (tracking VARCHAR KEY, scanned_at BIGINT, depot VARCHAR) WITH (kafka_topic='scans', value_format='JSON', timestamp='scanned_at');
ASSERT STREAM scans (tracking VARCHAR KEY, scanned_at BIGINT, depot VARCHAR) WITH (kafka_topic='scans', value_format='JSON', timestamp='scanned_at');

----------------------------------------------------------------------------------------------------
--@test: a source assertion without a topic compares the topic all the same
--@expected.error: io.confluent.ksql.util.KsqlException
--@expected.message: Expected kafka topic does not match actual for source PARCELS.
----------------------------------------------------------------------------------------------------
CREATE STREAM parcels (tracking VARCHAR KEY, grams INT) WITH (kafka_topic='parcels', value_format='JSON');
ASSERT STREAM parcels (tracking VARCHAR KEY, grams INT) WITH (value_format='JSON');

----------------------------------------------------------------------------------------------------
--@test: a source assertion without a value format has none to match
--@expected.error: io.confluent.ksql.util.KsqlException
--@expected.message: Expected value format does not match actual for source PARCELS.
----------------------------------------------------------------------------------------------------
CREATE STREAM parcels (tracking VARCHAR KEY, grams INT) WITH (kafka_topic='parcels', value_format='JSON');
ASSERT STREAM parcels (tracking VARCHAR KEY, grams INT) WITH (kafka_topic='parcels');

----------------------------------------------------------------------------------------------------
--@test: a source assertion without columns expects a source without columns
--@expected.error: io.confluent.ksql.util.KsqlException
--@expected.message: Expected schema does not match actual for source PARCELS.
----------------------------------------------------------------------------------------------------
CREATE STREAM parcels (tracking VARCHAR KEY, grams INT) WITH (kafka_topic='parcels', value_format='JSON');
ASSERT TABLE parcels WITH (kafka_topic='parcels', value_format='JSON');

----------------------------------------------------------------------------------------------------
--@test: a source assertion of the wrong kind names both kinds
--@expected.error: io.confluent.ksql.util.KsqlException
--@expected.message: Expected type does not match actual for source PARCELS.
----------------------------------------------------------------------------------------------------
CREATE STREAM parcels (tracking VARCHAR KEY, grams INT) WITH (kafka_topic='parcels', value_format='JSON');
ASSERT TABLE parcels (tracking VARCHAR PRIMARY KEY, grams INT) WITH (kafka_topic='parcels', value_format='JSON');

----------------------------------------------------------------------------------------------------
--@test: a source assertion without the timestamp column expects none
--@expected.error: io.confluent.ksql.util.KsqlException
--@expected.message: Expected timestamp column does not match actual for source SCANS.
----------------------------------------------------------------------------------------------------
CREATE STREAM scans (tracking VARCHAR KEY, scanned_at BIGINT, depot VARCHAR) WITH (kafka_topic='scans', value_format='JSON', timestamp='scanned_at');
ASSERT STREAM scans (tracking VARCHAR KEY, scanned_at BIGINT, depot VARCHAR) WITH (kafka_topic='scans', value_format='JSON');

----------------------------------------------------------------------------------------------------
--@test: asserting a record past the last one says all records were read
--@expected.error: java.lang.AssertionError
--@expected.message: Expected another record, but all records have already been read
----------------------------------------------------------------------------------------------------
CREATE STREAM parcels (tracking VARCHAR KEY, grams INT) WITH (kafka_topic='parcels', value_format='JSON');
CREATE STREAM heavy AS SELECT * FROM parcels WHERE grams > 1000;
INSERT INTO parcels (tracking, grams) VALUES ('p1', 2500);
ASSERT VALUES heavy (tracking, grams) VALUES ('p1', 2500);
ASSERT VALUES heavy (tracking, grams) VALUES ('p2', 3000);

----------------------------------------------------------------------------------------------------
--@test: asserting a table record without its primary key is refused as an insert is
--@expected.error: io.confluent.ksql.util.KsqlException
--@expected.message: Value for primary key column(s) SHELF is required for tables
----------------------------------------------------------------------------------------------------
CREATE TABLE shelves (shelf VARCHAR PRIMARY KEY, books INT) WITH (kafka_topic='shelves', value_format='JSON');
INSERT INTO shelves (shelf, books) VALUES ('s1', 12);
ASSERT VALUES shelves (books) VALUES (12);

----------------------------------------------------------------------------------------------------
--@test: a deletion asserted with a value column is an assertion error
--@expected.error: java.lang.AssertionError
--@expected.message: Unexpected value columns specified in ASSERT NULL VALUES.
----------------------------------------------------------------------------------------------------
CREATE TABLE bins (bin VARCHAR PRIMARY KEY, fill INT) WITH (kafka_topic='bins', value_format='JSON');
CREATE TABLE full_bins AS SELECT * FROM bins WHERE fill > 80;
INSERT INTO bins (bin, fill) VALUES ('b1', 90);
INSERT INTO bins (bin, fill) VALUES ('b1', 10);
ASSERT VALUES full_bins (bin, fill) VALUES ('b1', 90);
ASSERT NULL VALUES full_bins (bin, fill) KEY ('b1', 10);

----------------------------------------------------------------------------------------------------
--@test: a deletion assertion compares the key, not the timestamp
----------------------------------------------------------------------------------------------------
CREATE TABLE bins (bin VARCHAR PRIMARY KEY, fill INT) WITH (kafka_topic='bins', value_format='JSON');
CREATE TABLE full_bins AS SELECT * FROM bins WHERE fill > 80;
INSERT INTO bins (rowtime, bin, fill) VALUES (100, 'b1', 90);
INSERT INTO bins (rowtime, bin, fill) VALUES (200, 'b1', 10);
ASSERT VALUES full_bins (rowtime, bin, fill) VALUES (100, 'b1', 90);
ASSERT NULL VALUES full_bins (rowtime, bin) KEY (999, 'b1');

----------------------------------------------------------------------------------------------------
--@test: directive names are read in any case
--@Expected.Error: io.confluent.ksql.util.KsqlException
--@EXPECTED.MESSAGE: Expected kafka topic does not match actual for source PARCELS.
----------------------------------------------------------------------------------------------------
CREATE STREAM parcels (tracking VARCHAR KEY, grams INT) WITH (kafka_topic='parcels', value_format='JSON');
ASSERT STREAM parcels (tracking VARCHAR KEY, grams INT) WITH (kafka_topic='elsewhere', value_format='JSON');

----------------------------------------------------------------------------------------------------
--@test: a record's partition cannot be asserted, as it cannot be inserted
--@expected.error: io.confluent.ksql.util.KsqlException
--@expected.message: Inserting into column `ROWPARTITION` is not allowed.
----------------------------------------------------------------------------------------------------
CREATE STREAM parcels (tracking VARCHAR KEY, grams INT) WITH (kafka_topic='parcels', value_format='JSON');
ASSERT VALUES parcels (tracking, rowpartition) VALUES ('p1', 0);
