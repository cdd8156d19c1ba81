import { postgresOf } from './sqlParts';

/**
 * The web application's sessions: one row per signed-in browser, opened by the sign-in form or
 * by exchanging an access token (`?at=`). The cookie holds a random token; the row holds its
 * keyed hash only. A session made from a partner token remembers the API key the token was
 * issued with, so revoking that key ends the session as it ends the token.
 */
export const webSessions = `
CREATE TABLE web_sessions (
  id INTEGER PRIMARY KEY,
  token_hash TEXT NOT NULL UNIQUE,
  user_id INTEGER NOT NULL REFERENCES users(id),
  credential TEXT NOT NULL CHECK (credential IN ('password', 'accessToken', 'partnerToken')),
  api_key_id INTEGER REFERENCES api_keys(id),
  created_at TEXT NOT NULL,
  last_seen_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  ended_at TEXT
);
CREATE INDEX web_sessions_user ON web_sessions(user_id) WHERE ended_at IS NULL;
`;

/** The same schema on PostgreSQL, translated by the common conventions. */
export const webSessionsPostgres = postgresOf(webSessions);
