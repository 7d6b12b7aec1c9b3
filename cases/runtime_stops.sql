-- A query that stops at run time in a SQL test: the stop ends the test, and the test passes when
-- it expects Kafka Streams' StreamsException with the stop's message (see cases/runtime_stops.json
-- for the cases, and docs/reference/case-files.md, "Queries that stop").

----------------------------------------------------------------------------------------------------
--@test: a decimal SUM that overflows stops the query and ends the test
--@expected.error: org.apache.kafka.streams.errors.StreamsException
--@expected.message: Exception caught in process
----------------------------------------------------------------------------------------------------
CREATE STREAM tips (waiter VARCHAR KEY, tip DECIMAL(3,1)) WITH (kafka_topic='tips', value_format='JSON');
CREATE TABLE waiter_tips AS SELECT waiter, SUM(tip) AS tips FROM tips GROUP BY waiter;

INSERT INTO tips (waiter, tip) VALUES ('ida', 55.5);
INSERT INTO tips (waiter, tip) VALUES ('ida', 44.5);
ASSERT VALUES waiter_tips (waiter, tips) VALUES ('ida', 55.5);

----------------------------------------------------------------------------------------------------
--@test: a decimal SUM within its precision runs every statement
----------------------------------------------------------------------------------------------------
CREATE STREAM tips (waiter VARCHAR KEY, tip DECIMAL(3,1)) WITH (kafka_topic='tips', value_format='JSON');
CREATE TABLE waiter_tips AS SELECT waiter, SUM(tip) AS tips FROM tips GROUP BY waiter;

INSERT INTO tips (waiter, tip) VALUES ('ida', 55.5);
INSERT INTO tips (waiter, tip) VALUES ('ida', 44.4);
ASSERT VALUES waiter_tips (waiter, tips) VALUES ('ida', 55.5);
ASSERT VALUES waiter_tips (waiter, tips) VALUES ('ida', 99.9);
