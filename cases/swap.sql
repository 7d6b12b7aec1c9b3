-- Swap-in-place upgrades (docs/upgrades.md, "Swap-in-place"): CREATE OR REPLACE ... WITH
-- (SWAP_IN_PLACE=true) starts the new query under its own id, from the first record of its
-- source into empty state, beside the old one; control events mark the cut, and the new
-- query's start gate lets through only what it computed for the records after it. The sink
-- holds the old query's records before the cut and the new query's after it.

----------------------------------------------------------------------------------------------------
--@test: a new aggregate column is computed over the whole history after a swap
----------------------------------------------------------------------------------------------------
CREATE STREAM deliveries (depot VARCHAR KEY, kilos INT) WITH (kafka_topic='deliveries', value_format='JSON', partitions=2);
CREATE TABLE depot_load AS SELECT depot, COUNT(*) AS trips FROM deliveries GROUP BY depot;

INSERT INTO deliveries (rowtime, depot, kilos) VALUES (10, 'north', 40);
INSERT INTO deliveries (rowtime, depot, kilos) VALUES (20, 'south', 15);
INSERT INTO deliveries (rowtime, depot, kilos) VALUES (30, 'north', 25);
ASSERT VALUES depot_load (rowtime, depot, trips) VALUES (10, 'north', 1);
ASSERT VALUES depot_load (rowtime, depot, trips) VALUES (20, 'south', 1);
ASSERT VALUES depot_load (rowtime, depot, trips) VALUES (30, 'north', 2);

CREATE OR REPLACE TABLE depot_load WITH (SWAP_IN_PLACE=true) AS
  SELECT depot, COUNT(*) AS trips, SUM(kilos) AS kilos FROM deliveries GROUP BY depot;

INSERT INTO deliveries (rowtime, depot, kilos) VALUES (40, 'north', 5);
INSERT INTO deliveries (rowtime, depot, kilos) VALUES (50, 'east', 8);
ASSERT VALUES depot_load (rowtime, depot, trips, kilos) VALUES (40, 'north', 3, 70);
ASSERT VALUES depot_load (rowtime, depot, trips, kilos) VALUES (50, 'east', 1, 8);

----------------------------------------------------------------------------------------------------
--@test: a changed grouping is rebuilt from the whole history after a swap
----------------------------------------------------------------------------------------------------
CREATE STREAM fares (ride INT KEY, city VARCHAR, zone VARCHAR, cents INT) WITH (kafka_topic='fares', value_format='JSON');
CREATE TABLE takings AS SELECT city AS area, SUM(cents) AS cents FROM fares GROUP BY city;

INSERT INTO fares (rowtime, ride, city, zone, cents) VALUES (1, 1, 'lyon', 'L1', 900);
INSERT INTO fares (rowtime, ride, city, zone, cents) VALUES (2, 2, 'lyon', 'L2', 400);
ASSERT VALUES takings (rowtime, area, cents) VALUES (1, 'lyon', 900);
ASSERT VALUES takings (rowtime, area, cents) VALUES (2, 'lyon', 1300);

CREATE OR REPLACE TABLE takings WITH (SWAP_IN_PLACE=true) AS
  SELECT zone AS area, SUM(cents) AS cents FROM fares GROUP BY zone;

INSERT INTO fares (rowtime, ride, city, zone, cents) VALUES (3, 3, 'lyon', 'L1', 100);
ASSERT VALUES takings (rowtime, area, cents) VALUES (3, 'L1', 1000);

----------------------------------------------------------------------------------------------------
--@test: without SWAP_IN_PLACE the new aggregate column is refused
--@expected.error: io.confluent.ksql.util.KsqlException
--@expected.message: StreamAggregate must have matching columns not part of aggregate. Values differ: [`DEPOT`, `ROWTIME`] vs. [`DEPOT`, `ROWTIME`, `KILOS`]
----------------------------------------------------------------------------------------------------
CREATE STREAM deliveries (depot VARCHAR KEY, kilos INT) WITH (kafka_topic='deliveries', value_format='JSON');
CREATE TABLE depot_load AS SELECT depot, COUNT(*) AS trips FROM deliveries GROUP BY depot;
CREATE OR REPLACE TABLE depot_load AS
  SELECT depot, COUNT(*) AS trips, SUM(kilos) AS kilos FROM deliveries GROUP BY depot;

----------------------------------------------------------------------------------------------------
--@test: SWAP_IN_PLACE needs a running query to replace
--@expected.error: io.confluent.ksql.util.KsqlStatementException
--@expected.message: SWAP_IN_PLACE upgrades a running query
----------------------------------------------------------------------------------------------------
CREATE STREAM deliveries (depot VARCHAR KEY, kilos INT) WITH (kafka_topic='deliveries', value_format='JSON');
CREATE TABLE depot_load WITH (SWAP_IN_PLACE=true) AS SELECT depot, COUNT(*) AS trips FROM deliveries GROUP BY depot;
