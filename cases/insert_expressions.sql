-- INSERT VALUES and ASSERT VALUES with values that call functions or compute: Spark evaluates
-- each once, as ksqlDB's interpreter does, before the columns' strict coercion.

----------------------------------------------------------------------------------------------------
--@test: computed values are inserted and asserted as their results
----------------------------------------------------------------------------------------------------
CREATE STREAM tickets (id INT KEY, seat VARCHAR, fare DECIMAL(5,2), issued TIMESTAMP) WITH (kafka_topic='tickets', value_format='JSON');
CREATE STREAM upgraded AS SELECT id, UCASE(seat) AS seat, fare * 2 AS fare, issued FROM tickets;

INSERT INTO tickets (id, seat, fare, issued) VALUES (10 * 2, CONCAT('row', '-', CAST(7 AS VARCHAR)), CAST('12.50' AS DECIMAL(5,2)), FROM_UNIXTIME(60000));
ASSERT VALUES upgraded (id, seat, fare, issued) VALUES (20, UCASE('row-7'), CAST('25.00' AS DECIMAL(6,2)), FROM_UNIXTIME(30000 * 2));
