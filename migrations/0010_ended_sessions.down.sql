-- Without the table, sign-outs are forgotten: copies of signed-out session cookies are taken
-- again until they expire (at most FROGNANO's session lifetime, 8 hours by default).
DROP TABLE ended_sessions;
