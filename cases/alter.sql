-- ALTER STREAM|TABLE ... ADD COLUMN: a declared source gains value columns at its end. Queries
-- already running keep the columns they were started with; a query started or upgraded after
-- the ALTER reads the new ones.

----------------------------------------------------------------------------------------------------
--@test: a query started after the ALTER selects the new column with *
----------------------------------------------------------------------------------------------------
CREATE STREAM readings (sensor VARCHAR KEY, celsius INT) WITH (kafka_topic='readings', value_format='JSON');
ALTER STREAM readings ADD COLUMN humidity INT;
CREATE STREAM copies AS SELECT * FROM readings;

INSERT INTO readings (sensor, celsius, humidity) VALUES ('attic', 21, 40);
ASSERT VALUES copies (sensor, celsius, humidity) VALUES ('attic', 21, 40);

----------------------------------------------------------------------------------------------------
--@test: a running query keeps its columns and picks the new one up when it is upgraded
----------------------------------------------------------------------------------------------------
CREATE STREAM readings (sensor VARCHAR KEY, celsius INT) WITH (kafka_topic='readings', value_format='JSON');
CREATE STREAM copies AS SELECT * FROM readings;

INSERT INTO readings (sensor, celsius) VALUES ('attic', 21);
ASSERT VALUES copies (sensor, celsius) VALUES ('attic', 21);

ALTER STREAM readings ADD COLUMN humidity INT, ADD COLUMN pressure DOUBLE;
INSERT INTO readings (sensor, celsius, humidity, pressure) VALUES ('cellar', 12, 80, 1013.5);
ASSERT VALUES copies (sensor, celsius) VALUES ('cellar', 12);
ASSERT STREAM copies (sensor VARCHAR KEY, celsius INT) WITH (kafka_topic='COPIES', value_format='JSON');

CREATE OR REPLACE STREAM copies AS SELECT * FROM readings;
INSERT INTO readings (sensor, celsius, humidity, pressure) VALUES ('porch', 30, 20, 1009.0);
ASSERT VALUES copies (sensor, celsius, humidity, pressure) VALUES ('porch', 30, 20, 1009.0);

----------------------------------------------------------------------------------------------------
--@test: a table gains a column that an upgraded aggregation sums, keeping its counts
----------------------------------------------------------------------------------------------------
CREATE TABLE rooms (room VARCHAR PRIMARY KEY, floor INT) WITH (kafka_topic='rooms', value_format='JSON');
CREATE TABLE per_floor AS SELECT floor, COUNT(*) AS rooms FROM rooms GROUP BY floor;

INSERT INTO rooms (room, floor) VALUES ('a', 1);
ASSERT VALUES per_floor (floor, rooms) VALUES (1, 1);

ALTER TABLE rooms ADD COLUMN seats INT;
CREATE OR REPLACE TABLE per_floor AS SELECT floor, COUNT(*) AS rooms FROM rooms WHERE seats IS NULL OR seats > 0 GROUP BY floor;

INSERT INTO rooms (room, floor, seats) VALUES ('b', 1, 10);
ASSERT VALUES per_floor (floor, rooms) VALUES (1, 2);

----------------------------------------------------------------------------------------------------
--@test: a column cannot be inserted before the ALTER that adds it
--@expected.error: io.confluent.ksql.util.KsqlException
--@expected.message: HUMIDITY
----------------------------------------------------------------------------------------------------
CREATE STREAM readings (sensor VARCHAR KEY, celsius INT) WITH (kafka_topic='readings', value_format='JSON');
INSERT INTO readings (sensor, celsius, humidity) VALUES ('attic', 21, 40);
ALTER STREAM readings ADD COLUMN humidity INT;

----------------------------------------------------------------------------------------------------
--@test: a stream that a query writes cannot be altered
--@expected.error: io.confluent.ksql.util.KsqlException
--@expected.message: ALTER command is not supported for CREATE ... AS statements.
----------------------------------------------------------------------------------------------------
CREATE STREAM readings (sensor VARCHAR KEY, celsius INT) WITH (kafka_topic='readings', value_format='JSON');
CREATE STREAM copies AS SELECT * FROM readings;
ALTER STREAM copies ADD COLUMN humidity INT;

----------------------------------------------------------------------------------------------------
--@test: a column that exists cannot be added again
--@expected.error: io.confluent.ksql.util.KsqlException
--@expected.message: Cannot add column `CELSIUS` to schema. A column with the same name already exists.
----------------------------------------------------------------------------------------------------
CREATE STREAM readings (sensor VARCHAR KEY, celsius INT) WITH (kafka_topic='readings', value_format='JSON');
ALTER STREAM readings ADD COLUMN celsius INT;

----------------------------------------------------------------------------------------------------
--@test: a table cannot be altered as a stream
--@expected.error: io.confluent.ksql.util.KsqlException
--@expected.message: Incompatible data source type is TABLE, but statement was ALTER STREAM
----------------------------------------------------------------------------------------------------
CREATE TABLE rooms (room VARCHAR PRIMARY KEY, floor INT) WITH (kafka_topic='rooms', value_format='JSON');
ALTER STREAM rooms ADD COLUMN seats INT;

----------------------------------------------------------------------------------------------------
--@test: an unknown source cannot be altered
--@expected.error: io.confluent.ksql.util.KsqlException
--@expected.message: Source NOWHERE does not exist.
----------------------------------------------------------------------------------------------------
ALTER STREAM nowhere ADD COLUMN seats INT;
