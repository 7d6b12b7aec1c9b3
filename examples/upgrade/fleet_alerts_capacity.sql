-- The alert filter gains a capacity term: a ship is also flagged above 90% of its capacity.
CREATE OR REPLACE TABLE alerts AS
  SELECT l.ship AS ship, l.tons AS tons, f.capacity AS capacity
  FROM loads l JOIN fleet f ON l.ship = f.ship
  WHERE l.tons > 1000 OR l.tons * 10 > f.capacity * 9;
