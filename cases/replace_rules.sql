-- Round 8 audit of query upgrades (CREATE OR REPLACE) against ksqlDB's engine: which running
-- query a replacement upgrades (QueryIdUtil.buildId: the one query writing the sink, an
-- INSERT INTO's too), and which sinks no query may write (EngineExecutor.execute).

----------------------------------------------------------------------------------------------------
--@test: replacing the target of an INSERT INTO upgrades that query in place
----------------------------------------------------------------------------------------------------
CREATE STREAM parcels (tag INT KEY, grams INT) WITH (kafka_topic='parcels', value_format='JSON');
CREATE STREAM heavy (tag INT KEY, grams INT) WITH (kafka_topic='HEAVY', value_format='JSON');
INSERT INTO heavy SELECT * FROM parcels;

INSERT INTO parcels (tag, grams) VALUES (1, 1300);
ASSERT VALUES heavy (tag, grams) VALUES (1, 1300);

CREATE OR REPLACE STREAM heavy AS SELECT * FROM parcels WHERE grams > 1000;

INSERT INTO parcels (tag, grams) VALUES (2, 400);
INSERT INTO parcels (tag, grams) VALUES (3, 2500);
ASSERT VALUES heavy (tag, grams) VALUES (3, 2500);
INSERT INTO parcels (tag, grams) VALUES (4, 1800);
ASSERT VALUES heavy (tag, grams) VALUES (4, 1800);

----------------------------------------------------------------------------------------------------
--@test: the INSERT INTO a replacement upgrades must read the same source
--@expected.error: io.confluent.ksql.util.KsqlException
--@expected.message: Query is not upgradeable. Plan step of type StreamSource must have matching topicName. Values differ: parcels vs. letters
----------------------------------------------------------------------------------------------------
CREATE STREAM parcels (tag INT KEY, grams INT) WITH (kafka_topic='parcels', value_format='JSON');
CREATE STREAM letters (tag INT KEY, grams INT) WITH (kafka_topic='letters', value_format='JSON');
CREATE STREAM mail (tag INT KEY, grams INT) WITH (kafka_topic='MAIL', value_format='JSON');
INSERT INTO mail SELECT * FROM parcels;
CREATE OR REPLACE STREAM mail AS SELECT * FROM letters;

----------------------------------------------------------------------------------------------------
--@test: a read-only source stream cannot be replaced by a query
--@expected.error: io.confluent.ksql.util.KsqlException
--@expected.message: Cannot insert into read-only stream: ARCHIVE
----------------------------------------------------------------------------------------------------
CREATE SOURCE STREAM archive (tag INT KEY, grams INT) WITH (kafka_topic='ARCHIVE', value_format='JSON');
CREATE STREAM parcels (tag INT KEY, grams INT) WITH (kafka_topic='parcels', value_format='JSON');
CREATE OR REPLACE STREAM archive AS SELECT * FROM parcels;

----------------------------------------------------------------------------------------------------
--@test: a read-only source table cannot be replaced by a query
--@expected.error: io.confluent.ksql.util.KsqlException
--@expected.message: Cannot insert into read-only table: RATES
----------------------------------------------------------------------------------------------------
CREATE SOURCE TABLE rates (zone INT PRIMARY KEY, cents INT) WITH (kafka_topic='RATES', value_format='JSON');
CREATE TABLE offers (zone INT PRIMARY KEY, cents INT) WITH (kafka_topic='offers', value_format='JSON');
CREATE OR REPLACE TABLE rates AS SELECT * FROM offers;

----------------------------------------------------------------------------------------------------
--@test: IF NOT EXISTS does not skip a read-only source
--@expected.error: io.confluent.ksql.util.KsqlException
--@expected.message: Cannot insert into read-only stream: ARCHIVE
----------------------------------------------------------------------------------------------------
CREATE SOURCE STREAM archive (tag INT KEY, grams INT) WITH (kafka_topic='ARCHIVE', value_format='JSON');
CREATE STREAM parcels (tag INT KEY, grams INT) WITH (kafka_topic='parcels', value_format='JSON');
CREATE STREAM IF NOT EXISTS archive AS SELECT * FROM parcels;

----------------------------------------------------------------------------------------------------
--@test: with replacement switched off, a source table's own query keeps its name
--@expected.error: io.confluent.ksql.util.KsqlStatementException
--@expected.message: Cannot add table 'RATES': A table with the same name already exists
----------------------------------------------------------------------------------------------------
SET 'ksql.create.or.replace.enabled' = 'false';
CREATE SOURCE TABLE rates (zone INT PRIMARY KEY, cents INT) WITH (kafka_topic='RATES', value_format='JSON');
CREATE TABLE offers (zone INT PRIMARY KEY, cents INT) WITH (kafka_topic='offers', value_format='JSON');
CREATE OR REPLACE TABLE rates AS SELECT * FROM offers;
