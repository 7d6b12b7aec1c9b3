-- The fleet example of the query-evolution taxonomy: the load each ship carries, joined to the
-- fleet's capacities, and an alert for every ship that carries too much. The rows below are
-- what `qtt upgrade --prove` replays.
CREATE STREAM cargo (ship VARCHAR KEY, tons INT) WITH (kafka_topic='cargo', value_format='JSON');
CREATE TABLE fleet (ship VARCHAR PRIMARY KEY, capacity INT) WITH (kafka_topic='fleet', value_format='JSON');
CREATE TABLE loads AS SELECT ship, SUM(tons) AS tons FROM cargo GROUP BY ship;
CREATE TABLE alerts AS
  SELECT l.ship AS ship, l.tons AS tons, f.capacity AS capacity
  FROM loads l JOIN fleet f ON l.ship = f.ship
  WHERE l.tons > 1000;

INSERT INTO fleet (ship, capacity) VALUES ('aurora', 1500);
INSERT INTO fleet (ship, capacity) VALUES ('borealis', 800);
INSERT INTO cargo (ship, tons) VALUES ('aurora', 600);
INSERT INTO cargo (ship, tons) VALUES ('borealis', 750);
INSERT INTO cargo (ship, tons) VALUES ('aurora', 500);
INSERT INTO cargo (ship, tons) VALUES ('borealis', 20);
INSERT INTO fleet (ship, capacity) VALUES ('borealis', 700);
INSERT INTO cargo (ship, tons) VALUES ('aurora', 100);
