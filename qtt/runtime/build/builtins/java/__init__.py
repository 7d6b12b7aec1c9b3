"""Java's library semantics as plain Python, where ksqlDB's functions inherit them."""
