-- qtt's own SQL tests. Each test's statements run in order: queries start, INSERT ... VALUES
-- writes records, CREATE OR REPLACE upgrades a running query in place (same query id, its
-- offsets and state resumed by the new plan), and ASSERT reads the next record of a topic.

----------------------------------------------------------------------------------------------------
--@test: a projection gains a column and does not read old records again
----------------------------------------------------------------------------------------------------
CREATE STREAM readings (sensor VARCHAR KEY, celsius INT) WITH (kafka_topic='readings', value_format='JSON');
CREATE STREAM warm AS SELECT sensor, celsius FROM readings WHERE celsius > 20;

INSERT INTO readings (rowtime, sensor, celsius) VALUES (10, 'attic', 25);
INSERT INTO readings (rowtime, sensor, celsius) VALUES (20, 'cellar', 12);
ASSERT VALUES warm (rowtime, sensor, celsius) VALUES (10, 'attic', 25);

CREATE OR REPLACE STREAM warm AS
  SELECT sensor, celsius, celsius * 9 / 5 + 32 AS fahrenheit FROM readings WHERE celsius > 20;

INSERT INTO readings (rowtime, sensor, celsius) VALUES (30, 'porch', 30);
ASSERT VALUES warm (rowtime, sensor, celsius, fahrenheit) VALUES (30, 'porch', 30, 86);

----------------------------------------------------------------------------------------------------
--@test: a count keeps its state when its filter changes
----------------------------------------------------------------------------------------------------
CREATE STREAM visits (page VARCHAR KEY, ms INT) WITH (kafka_topic='visits', value_format='JSON');
CREATE TABLE views AS SELECT page, COUNT(*) AS n FROM visits WHERE ms >= 0 GROUP BY page;

INSERT INTO visits (page, ms) VALUES ('home', 5);
INSERT INTO visits (page, ms) VALUES ('home', 0);
ASSERT VALUES views (page, n) VALUES ('home', 1);
ASSERT VALUES views (page, n) VALUES ('home', 2);

CREATE OR REPLACE TABLE views AS SELECT page, COUNT(*) AS n FROM visits WHERE ms > 0 GROUP BY page;

INSERT INTO visits (page, ms) VALUES ('home', 0);
INSERT INTO visits (page, ms) VALUES ('home', 7);
ASSERT VALUES views (page, n) VALUES ('home', 3);

----------------------------------------------------------------------------------------------------
--@test: two upgrades in a row carry a sum through both
----------------------------------------------------------------------------------------------------
CREATE STREAM payments (account INT KEY, cents BIGINT) WITH (kafka_topic='payments', value_format='JSON');
CREATE TABLE balances AS SELECT account, SUM(cents) AS total FROM payments GROUP BY account;

INSERT INTO payments (account, cents) VALUES (7, 100);
INSERT INTO payments (account, cents) VALUES (8, 1);
ASSERT VALUES balances (account, total) VALUES (7, 100);
ASSERT VALUES balances (account, total) VALUES (8, 1);

CREATE OR REPLACE TABLE balances AS
  SELECT account, SUM(cents) AS total FROM payments WHERE cents > 0 GROUP BY account;

INSERT INTO payments (account, cents) VALUES (7, -50);
INSERT INTO payments (account, cents) VALUES (7, 20);
ASSERT VALUES balances (account, total) VALUES (7, 120);

CREATE OR REPLACE TABLE balances AS
  SELECT account, SUM(cents) AS total, AS_VALUE(account) AS owner FROM payments WHERE cents > 0 GROUP BY account;

INSERT INTO payments (account, cents) VALUES (8, 5);
ASSERT VALUES balances (account, total, owner) VALUES (8, 6, 8);

----------------------------------------------------------------------------------------------------
--@test: inserted rows are written in the source's own format
----------------------------------------------------------------------------------------------------
CREATE STREAM quotes (symbol VARCHAR KEY, price DOUBLE) WITH (kafka_topic='quotes', value_format='AVRO');
CREATE STREAM dear AS SELECT symbol, price FROM quotes WHERE price > 100;

INSERT INTO quotes (symbol, price) VALUES ('ACME', 150.5);
INSERT INTO quotes (symbol, price) VALUES ('TINY', 2.25);
ASSERT VALUES quotes (symbol, price) VALUES ('ACME', 150.5);
ASSERT VALUES quotes (symbol, price) VALUES ('TINY', 2.25);
ASSERT VALUES dear (symbol, price) VALUES ('ACME', 150.5);

----------------------------------------------------------------------------------------------------
--@test: a table filter deletes a row that stops passing
----------------------------------------------------------------------------------------------------
CREATE TABLE stock (sku VARCHAR PRIMARY KEY, qty INT) WITH (kafka_topic='stock', value_format='JSON');
CREATE TABLE in_stock AS SELECT * FROM stock WHERE qty > 0;

INSERT INTO stock (sku, qty) VALUES ('bolt', 3);
INSERT INTO stock (sku, qty) VALUES ('bolt', 0);
ASSERT VALUES in_stock (sku, qty) VALUES ('bolt', 3);
ASSERT NULL VALUES in_stock (sku) KEY ('bolt');

----------------------------------------------------------------------------------------------------
--@test: a table filter added by an upgrade judges the rows the table held before it
----------------------------------------------------------------------------------------------------
-- The new filter (tableFilterV3) keeps each key's previous source row; the old query kept no
-- state, so the upgraded one rebuilds it from the records before the upgrade.
CREATE TABLE gauges (id INT PRIMARY KEY, level INT) WITH (kafka_topic='gauges', value_format='JSON');
CREATE TABLE high AS SELECT * FROM gauges;

INSERT INTO gauges (id, level) VALUES (1, 5);
INSERT INTO gauges (id, level) VALUES (2, 1);
ASSERT VALUES high (id, level) VALUES (1, 5);
ASSERT VALUES high (id, level) VALUES (2, 1);

CREATE OR REPLACE TABLE high AS SELECT * FROM gauges WHERE level > 3;

INSERT INTO gauges (id, level) VALUES (1, 2);
INSERT INTO gauges (id, level) VALUES (2, 0);
INSERT INTO gauges (id, level) VALUES (2, 7);
ASSERT NULL VALUES high (id) KEY (1);
ASSERT VALUES high (id, level) VALUES (2, 7);

----------------------------------------------------------------------------------------------------
--@test: a changed table filter judges the stored rows by its new expression
----------------------------------------------------------------------------------------------------
CREATE TABLE gauges (id INT PRIMARY KEY, level INT) WITH (kafka_topic='gauges', value_format='JSON');
CREATE TABLE high AS SELECT * FROM gauges WHERE level > 3;

INSERT INTO gauges (id, level) VALUES (1, 5);
ASSERT VALUES high (id, level) VALUES (1, 5);

CREATE OR REPLACE TABLE high AS SELECT * FROM gauges WHERE level > 6;

-- the stored row (1, 5) fails the new filter: no delete for a row that no longer passes
INSERT INTO gauges (id, level) VALUES (1, 4);
INSERT INTO gauges (id, level) VALUES (1, 8);
INSERT INTO gauges (id, level) VALUES (1, 2);
ASSERT VALUES high (id, level) VALUES (1, 8);
ASSERT NULL VALUES high (id) KEY (1);

----------------------------------------------------------------------------------------------------
-- Upgrades beyond ksqlDB's: with 'qtt.upgrades.extended', filters and projections around joins,
-- windowed aggregations and table functions may change; each test below resumes real state
-- from before the upgrade (a table row, a window's count, a buffered stream row).
----------------------------------------------------------------------------------------------------
--@test: extended: a stream-table join keeps its table rows when its filter changes
----------------------------------------------------------------------------------------------------
SET 'qtt.upgrades.extended' = 'true';
CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR, tier VARCHAR) WITH (kafka_topic='customers', value_format='JSON');
CREATE STREAM orders (customer INT KEY, amount INT) WITH (kafka_topic='orders', value_format='JSON');
CREATE STREAM enriched AS SELECT o.customer, o.amount, c.name FROM orders o JOIN customers c ON o.customer = c.id WHERE o.amount > 10;

INSERT INTO customers (id, name, tier) VALUES (1, 'ada', 'gold');
INSERT INTO orders (customer, amount) VALUES (1, 50);
ASSERT VALUES enriched (customer, amount, name) VALUES (1, 50, 'ada');

CREATE OR REPLACE STREAM enriched AS SELECT o.customer, o.amount, c.name FROM orders o JOIN customers c ON o.customer = c.id WHERE o.amount > 100;

INSERT INTO orders (customer, amount) VALUES (1, 60);
INSERT INTO orders (customer, amount) VALUES (1, 150);
ASSERT VALUES enriched (customer, amount, name) VALUES (1, 150, 'ada');

----------------------------------------------------------------------------------------------------
--@test: extended: a stream-table join keeps its table rows when its projection gains a column
----------------------------------------------------------------------------------------------------
SET 'qtt.upgrades.extended' = 'true';
CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR, tier VARCHAR) WITH (kafka_topic='customers', value_format='JSON');
CREATE STREAM orders (customer INT KEY, amount INT) WITH (kafka_topic='orders', value_format='JSON');
CREATE STREAM enriched AS SELECT o.customer, o.amount, c.name FROM orders o JOIN customers c ON o.customer = c.id;

INSERT INTO customers (id, name, tier) VALUES (1, 'ada', 'gold');
INSERT INTO orders (customer, amount) VALUES (1, 50);
ASSERT VALUES enriched (customer, amount, name) VALUES (1, 50, 'ada');

CREATE OR REPLACE STREAM enriched AS SELECT o.customer, o.amount, c.name, c.tier FROM orders o JOIN customers c ON o.customer = c.id;

INSERT INTO orders (customer, amount) VALUES (1, 70);
ASSERT VALUES enriched (customer, amount, name, tier) VALUES (1, 70, 'ada', 'gold');

----------------------------------------------------------------------------------------------------
--@test: extended: a table-table join keeps both sides when its filter changes
----------------------------------------------------------------------------------------------------
SET 'qtt.upgrades.extended' = 'true';
CREATE TABLE stock (sku VARCHAR PRIMARY KEY, qty INT) WITH (kafka_topic='stock', value_format='JSON');
CREATE TABLE prices (sku VARCHAR PRIMARY KEY, price INT) WITH (kafka_topic='prices', value_format='JSON');
CREATE TABLE worth AS SELECT s.sku AS sku, qty, price FROM stock s JOIN prices p ON s.sku = p.sku WHERE qty > 0;

INSERT INTO stock (sku, qty) VALUES ('bolt', 3);
INSERT INTO prices (sku, price) VALUES ('bolt', 2);
ASSERT VALUES worth (sku, qty, price) VALUES ('bolt', 3, 2);

CREATE OR REPLACE TABLE worth AS SELECT s.sku AS sku, qty, price FROM stock s JOIN prices p ON s.sku = p.sku WHERE qty > 5;

INSERT INTO stock (sku, qty) VALUES ('bolt', 9);
ASSERT VALUES worth (sku, qty, price) VALUES ('bolt', 9, 2);

----------------------------------------------------------------------------------------------------
--@test: extended: a stream-stream join keeps its window's rows when its filter changes
----------------------------------------------------------------------------------------------------
SET 'qtt.upgrades.extended' = 'true';
CREATE STREAM clicks (who VARCHAR KEY, page VARCHAR) WITH (kafka_topic='clicks', value_format='JSON');
CREATE STREAM buys (who VARCHAR KEY, item VARCHAR) WITH (kafka_topic='buys', value_format='JSON');
CREATE STREAM converted AS SELECT c.who AS who, page, item FROM clicks c JOIN buys b WITHIN 1 HOUR ON c.who = b.who;

INSERT INTO clicks (rowtime, who, page) VALUES (1000, 'ann', 'home');
INSERT INTO buys (rowtime, who, item) VALUES (2000, 'ann', 'pen');
ASSERT VALUES converted (who, page, item) VALUES ('ann', 'home', 'pen');

CREATE OR REPLACE STREAM converted AS SELECT c.who AS who, page, item FROM clicks c JOIN buys b WITHIN 1 HOUR ON c.who = b.who WHERE item <> 'pen';

INSERT INTO buys (rowtime, who, item) VALUES (3000, 'ann', 'pen');
INSERT INTO buys (rowtime, who, item) VALUES (4000, 'ann', 'ink');
ASSERT VALUES converted (who, page, item) VALUES ('ann', 'home', 'ink');

----------------------------------------------------------------------------------------------------
--@test: extended: a windowed count goes on counting when its filter changes
----------------------------------------------------------------------------------------------------
SET 'qtt.upgrades.extended' = 'true';
CREATE STREAM hits (page VARCHAR KEY, ms INT) WITH (kafka_topic='hits', value_format='JSON');
CREATE TABLE per_minute AS SELECT page, COUNT(*) AS n FROM hits WINDOW TUMBLING (SIZE 1 MINUTE) WHERE ms > 0 GROUP BY page;

INSERT INTO hits (rowtime, page, ms) VALUES (1000, 'a', 5);
ASSERT VALUES per_minute (page, n) VALUES ('a', 1);

CREATE OR REPLACE TABLE per_minute AS SELECT page, COUNT(*) AS n FROM hits WINDOW TUMBLING (SIZE 1 MINUTE) WHERE ms > 10 GROUP BY page;

INSERT INTO hits (rowtime, page, ms) VALUES (2000, 'a', 3);
INSERT INTO hits (rowtime, page, ms) VALUES (3000, 'a', 20);
ASSERT VALUES per_minute (page, n) VALUES ('a', 2);

----------------------------------------------------------------------------------------------------
--@test: extended: a windowed count keeps its windows when it gains a HAVING
----------------------------------------------------------------------------------------------------
SET 'qtt.upgrades.extended' = 'true';
CREATE STREAM hits (page VARCHAR KEY, ms INT) WITH (kafka_topic='hits', value_format='JSON');
CREATE TABLE per_minute AS SELECT page, COUNT(*) AS n FROM hits WINDOW TUMBLING (SIZE 1 MINUTE) GROUP BY page;

INSERT INTO hits (rowtime, page, ms) VALUES (1000, 'a', 5);
ASSERT VALUES per_minute (page, n) VALUES ('a', 1);

CREATE OR REPLACE TABLE per_minute AS SELECT page, COUNT(*) AS n FROM hits WINDOW TUMBLING (SIZE 1 MINUTE) GROUP BY page HAVING COUNT(*) > 1;

INSERT INTO hits (rowtime, page, ms) VALUES (2000, 'a', 3);
ASSERT VALUES per_minute (page, n) VALUES ('a', 2);

----------------------------------------------------------------------------------------------------
--@test: extended: a table function's filter and projection change
----------------------------------------------------------------------------------------------------
SET 'qtt.upgrades.extended' = 'true';
CREATE STREAM baskets (id INT KEY, items VARCHAR, total INT) WITH (kafka_topic='baskets', value_format='JSON');
CREATE STREAM lines AS SELECT id, EXPLODE(SPLIT(items, ',')) AS item FROM baskets WHERE total > 0;

INSERT INTO baskets (id, items, total) VALUES (1, 'a,b', 5);
ASSERT VALUES lines (id, item) VALUES (1, 'a');
ASSERT VALUES lines (id, item) VALUES (1, 'b');

CREATE OR REPLACE STREAM lines AS SELECT id, EXPLODE(SPLIT(items, ',')) AS item, total FROM baskets WHERE total > 10;

INSERT INTO baskets (id, items, total) VALUES (2, 'c', 5);
INSERT INTO baskets (id, items, total) VALUES (3, 'd', 20);
ASSERT VALUES lines (id, item, total) VALUES (3, 'd', 20);

----------------------------------------------------------------------------------------------------
--@test: extended: a join's type cannot change in place
--@expected.error: io.confluent.ksql.util.KsqlException
--@expected.message: StreamTableJoin must have matching join type. Values differ: INNER vs. LEFT
----------------------------------------------------------------------------------------------------
SET 'qtt.upgrades.extended' = 'true';
CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR) WITH (kafka_topic='customers', value_format='JSON');
CREATE STREAM orders (customer INT KEY, amount INT) WITH (kafka_topic='orders', value_format='JSON');
CREATE STREAM enriched AS SELECT o.customer, o.amount, c.name FROM orders o JOIN customers c ON o.customer = c.id;
CREATE OR REPLACE STREAM enriched AS SELECT o.customer, o.amount, c.name FROM orders o LEFT JOIN customers c ON o.customer = c.id;

----------------------------------------------------------------------------------------------------
--@test: extended: a window's grace period cannot change in place
--@expected.error: io.confluent.ksql.util.KsqlException
--@expected.message: StreamWindowedAggregate must have matching window
----------------------------------------------------------------------------------------------------
SET 'qtt.upgrades.extended' = 'true';
CREATE STREAM hits (page VARCHAR KEY, ms INT) WITH (kafka_topic='hits', value_format='JSON');
CREATE TABLE per_minute AS SELECT page, COUNT(*) AS n FROM hits WINDOW TUMBLING (SIZE 1 MINUTE, GRACE PERIOD 10 SECONDS) GROUP BY page;
CREATE OR REPLACE TABLE per_minute AS SELECT page, COUNT(*) AS n FROM hits WINDOW TUMBLING (SIZE 1 MINUTE, GRACE PERIOD 20 SECONDS) GROUP BY page;

----------------------------------------------------------------------------------------------------
--@test: the shape of a query's sink can be asserted
----------------------------------------------------------------------------------------------------
CREATE STREAM orders (id BIGINT KEY, item VARCHAR, qty INT) WITH (kafka_topic='orders', value_format='JSON');
CREATE STREAM big_orders WITH (kafka_topic='big') AS SELECT id, qty FROM orders WHERE qty > 10;

ASSERT STREAM big_orders (id BIGINT KEY, qty INT) WITH (kafka_topic='big', key_format='KAFKA', value_format='JSON');

----------------------------------------------------------------------------------------------------
--@test: a wrong sink topic is reported
--@expected.error: io.confluent.ksql.util.KsqlException
--@expected.message: Expected kafka topic does not match actual for source BIG_ORDERS
----------------------------------------------------------------------------------------------------
CREATE STREAM orders (id BIGINT KEY, item VARCHAR, qty INT) WITH (kafka_topic='orders', value_format='JSON');
CREATE STREAM big_orders AS SELECT id, qty FROM orders WHERE qty > 10;

ASSERT STREAM big_orders (id BIGINT KEY, qty INT) WITH (kafka_topic='big');

----------------------------------------------------------------------------------------------------
--@test: an assertion that does not hold fails the test
--@expected.error: java.lang.AssertionError
--@expected.message: Expected record does not match actual
----------------------------------------------------------------------------------------------------
CREATE STREAM orders (id BIGINT KEY, item VARCHAR, qty INT) WITH (kafka_topic='orders', value_format='JSON');
CREATE STREAM copies AS SELECT * FROM orders;

INSERT INTO orders (id, item, qty) VALUES (1, 'nail', 40);
ASSERT VALUES copies (id, item, qty) VALUES (1, 'nail', 41);

----------------------------------------------------------------------------------------------------
--@test: a record that no insert has caused yet cannot be asserted
--@expected.error: java.lang.AssertionError
--@expected.message: Expected another record, but all records have already been read
----------------------------------------------------------------------------------------------------
CREATE STREAM orders (id BIGINT KEY, item VARCHAR, qty INT) WITH (kafka_topic='orders', value_format='JSON');
CREATE STREAM copies AS SELECT * FROM orders;

ASSERT VALUES copies (id, item, qty) VALUES (1, 'nail', 40);
INSERT INTO orders (id, item, qty) VALUES (1, 'nail', 40);

----------------------------------------------------------------------------------------------------
--@test: re-keying a running query is refused
--@expected.error: io.confluent.ksql.util.KsqlException
--@expected.message: Key columns must be identical. The following key columns are changed, missing or reordered: [`X` INTEGER KEY]
----------------------------------------------------------------------------------------------------
CREATE STREAM moves (id INT KEY, x INT, y INT) WITH (kafka_topic='moves', value_format='JSON');
CREATE STREAM by_x AS SELECT * FROM moves PARTITION BY x;
CREATE OR REPLACE STREAM by_x AS SELECT * FROM moves PARTITION BY y;

----------------------------------------------------------------------------------------------------
--@test: dropping a column of a running query is refused
--@expected.error: io.confluent.ksql.util.KsqlException
--@expected.message: The following columns are changed, missing or reordered: [`Y` INTEGER]
----------------------------------------------------------------------------------------------------
CREATE STREAM moves (id INT KEY, x INT, y INT) WITH (kafka_topic='moves', value_format='JSON');
CREATE STREAM copy_of_moves AS SELECT id, x, y FROM moves;
CREATE OR REPLACE STREAM copy_of_moves AS SELECT id, x FROM moves;

----------------------------------------------------------------------------------------------------
--@test: changing what an aggregate stores is refused
--@expected.error: io.confluent.ksql.util.KsqlException
--@expected.message: StreamAggregate must have matching aggregate functions. Values differ: [MAX(X)] vs. [MIN(X)]
----------------------------------------------------------------------------------------------------
CREATE STREAM moves (id INT KEY, x INT, y INT) WITH (kafka_topic='moves', value_format='JSON');
CREATE TABLE reach AS SELECT id, MAX(x) AS far FROM moves GROUP BY id;
CREATE OR REPLACE TABLE reach AS SELECT id, MIN(x) AS far FROM moves GROUP BY id;

----------------------------------------------------------------------------------------------------
--@test: an aggregation that starts reading another column is refused
--@expected.error: io.confluent.ksql.util.KsqlException
--@expected.message: StreamAggregate must have matching columns not part of aggregate. Values differ: [`ID`, `X`] vs. [`ID`, `Y`]
----------------------------------------------------------------------------------------------------
CREATE STREAM moves (id INT KEY, x INT, y INT) WITH (kafka_topic='moves', value_format='JSON');
CREATE TABLE reach AS SELECT id, MAX(x) AS far FROM moves GROUP BY id;
CREATE OR REPLACE TABLE reach AS SELECT id, MAX(y) AS far FROM moves GROUP BY id;

----------------------------------------------------------------------------------------------------
--@test: a filter that reads a column the aggregation did not read is refused
--@expected.error: io.confluent.ksql.util.KsqlException
--@expected.message: StreamAggregate must have matching columns not part of aggregate. Values differ: [`PAGE`, `ROWTIME`] vs. [`PAGE`, `ROWTIME`, `MS`]
----------------------------------------------------------------------------------------------------
CREATE STREAM visits (page VARCHAR KEY, ms INT) WITH (kafka_topic='visits', value_format='JSON');
CREATE TABLE views AS SELECT page, COUNT(*) AS n FROM visits GROUP BY page;
CREATE OR REPLACE TABLE views AS SELECT page, COUNT(*) AS n FROM visits WHERE ms > 0 GROUP BY page;

----------------------------------------------------------------------------------------------------
--@test: extended: an aggregation goes on counting when its new filter reads another column
----------------------------------------------------------------------------------------------------
SET 'qtt.upgrades.extended' = 'true';
CREATE STREAM visits (page VARCHAR KEY, ms INT) WITH (kafka_topic='visits', value_format='JSON');
CREATE TABLE views AS SELECT page, COUNT(*) AS n FROM visits GROUP BY page;

INSERT INTO visits (page, ms) VALUES ('home', 0);
ASSERT VALUES views (page, n) VALUES ('home', 1);

CREATE OR REPLACE TABLE views AS SELECT page, COUNT(*) AS n FROM visits WHERE ms > 0 GROUP BY page;

INSERT INTO visits (page, ms) VALUES ('home', 0);
INSERT INTO visits (page, ms) VALUES ('home', 9);
ASSERT VALUES views (page, n) VALUES ('home', 2);

----------------------------------------------------------------------------------------------------
--@test: a join cannot be upgraded yet
--@expected.error: io.confluent.ksql.util.KsqlException
--@expected.message: Upgrades not yet supported for StreamTableJoin
----------------------------------------------------------------------------------------------------
CREATE STREAM clicks (user_id INT KEY, url VARCHAR) WITH (kafka_topic='clicks', value_format='JSON');
CREATE TABLE users (user_id INT PRIMARY KEY, name VARCHAR) WITH (kafka_topic='users', value_format='JSON');
CREATE STREAM named_clicks AS SELECT c.user_id, c.url, u.name FROM clicks c JOIN users u ON c.user_id = u.user_id;
CREATE OR REPLACE STREAM named_clicks AS
  SELECT c.user_id, c.url, u.name FROM clicks c JOIN users u ON c.user_id = u.user_id WHERE c.url <> '';

----------------------------------------------------------------------------------------------------
--@test: a source that a query reads cannot be dropped
--@expected.error: io.confluent.ksql.util.KsqlStatementException
--@expected.message: The following streams and/or tables read from this source: [COPIES]
----------------------------------------------------------------------------------------------------
CREATE STREAM orders (id BIGINT KEY, item VARCHAR, qty INT) WITH (kafka_topic='orders', value_format='JSON');
CREATE STREAM copies AS SELECT * FROM orders;
DROP STREAM orders;

----------------------------------------------------------------------------------------------------
--@test: a query started after some inserts reads only the records inserted after it
----------------------------------------------------------------------------------------------------
CREATE STREAM orders (id BIGINT KEY, item VARCHAR, qty INT) WITH (kafka_topic='orders', value_format='JSON');
CREATE STREAM copies AS SELECT * FROM orders;

INSERT INTO orders (id, item, qty) VALUES (1, 'nail', 40);
CREATE TABLE per_item AS SELECT item, SUM(qty) AS total FROM copies GROUP BY item;
INSERT INTO orders (id, item, qty) VALUES (2, 'nail', 2);

ASSERT VALUES copies (id, item, qty) VALUES (1, 'nail', 40);
ASSERT VALUES copies (id, item, qty) VALUES (2, 'nail', 2);
ASSERT VALUES per_item (item, total) VALUES ('nail', 2);

----------------------------------------------------------------------------------------------------
--@test: a query writing into an existing stream widens numbers to its decimals
----------------------------------------------------------------------------------------------------
CREATE STREAM fees (sku VARCHAR KEY, rate DECIMAL(3, 1)) WITH (kafka_topic='fees', value_format='JSON');
CREATE STREAM ledger (sku VARCHAR KEY, rate DECIMAL(6, 2), flat DECIMAL(6, 2)) WITH (kafka_topic='ledger', value_format='JSON');
INSERT INTO ledger SELECT sku, rate, 2 AS flat FROM fees;

INSERT INTO fees (sku, rate) VALUES ('tea', 12.5);
ASSERT VALUES ledger (sku, rate, flat) VALUES ('tea', 12.50, 2.00);
