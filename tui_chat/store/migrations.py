"""Numbered schema migrations, tracked in ``PRAGMA user_version``.

Migration ``n`` (1-based) brings a database from version ``n - 1`` to ``n``. Each runs in one
transaction together with the ``user_version`` bump. Never edit a released migration: add one.
"""

from __future__ import annotations

MIGRATIONS: tuple[str, ...] = (
    # 1: conversations, messages, summaries, anchors, calibration, FTS5 over message text.
    """
    CREATE TABLE conversations (
        id TEXT PRIMARY KEY,
        title TEXT NOT NULL,
        model TEXT NOT NULL,
        system_prompt TEXT NOT NULL DEFAULT '',
        settings TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        archived_at TEXT,
        active_summary_id INTEGER
    );
    CREATE INDEX conversations_updated ON conversations(updated_at);

    CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
        content TEXT NOT NULL,
        text TEXT NOT NULL,
        turn INTEGER NOT NULL,
        token_count INTEGER NOT NULL,
        status TEXT NOT NULL
            CHECK (status IN ('complete', 'streaming', 'incomplete', 'error')),
        model TEXT,
        usage TEXT,
        stop_reason TEXT,
        created_at TEXT NOT NULL
    );
    CREATE INDEX messages_conversation ON messages(conversation_id, id);

    CREATE TABLE summaries (
        id INTEGER PRIMARY KEY,
        conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        version INTEGER NOT NULL,
        parent_id INTEGER REFERENCES summaries(id),
        strategy TEXT NOT NULL CHECK (strategy IN ('running', 'segments')),
        text TEXT NOT NULL DEFAULT '',
        segments TEXT NOT NULL DEFAULT '[]',
        fields TEXT NOT NULL DEFAULT '{}',
        covers_to_message_id INTEGER NOT NULL,
        covered_messages INTEGER NOT NULL DEFAULT 0,
        source_tokens INTEGER NOT NULL DEFAULT 0,
        summary_tokens INTEGER NOT NULL DEFAULT 0,
        trigger TEXT NOT NULL
            CHECK (trigger IN ('auto', 'manual', 'regenerate', 'emergency')),
        instructions TEXT,
        summarizer TEXT NOT NULL DEFAULT '',
        identifiers_kept INTEGER NOT NULL DEFAULT 0,
        identifiers_total INTEGER NOT NULL DEFAULT 0,
        status TEXT NOT NULL CHECK (status IN ('in_progress', 'completed', 'failed')),
        error TEXT,
        lease_owner TEXT,
        lease_expires_at REAL,
        created_at TEXT NOT NULL,
        completed_at TEXT,
        UNIQUE (conversation_id, version)
    );
    -- One compaction at a time per conversation: the lease row.
    CREATE UNIQUE INDEX summaries_one_in_progress
        ON summaries(conversation_id) WHERE status = 'in_progress';
    -- Two engines never produce two automatic versions for one boundary.
    CREATE UNIQUE INDEX summaries_one_auto_per_boundary
        ON summaries(conversation_id, IFNULL(parent_id, 0), covers_to_message_id)
        WHERE status != 'failed' AND trigger IN ('auto', 'emergency');

    CREATE TABLE anchors (
        message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
        conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        note TEXT NOT NULL DEFAULT '',
        pinned_at TEXT NOT NULL
    );
    CREATE INDEX anchors_conversation ON anchors(conversation_id);

    CREATE TABLE calibration (
        model TEXT PRIMARY KEY,
        ratio REAL NOT NULL,
        samples INTEGER NOT NULL
    );

    CREATE VIRTUAL TABLE messages_fts USING fts5(
        text, content='messages', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
    );
    CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
        INSERT INTO messages_fts(rowid, text) VALUES (new.id, new.text);
    END;
    CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
        INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
    END;
    CREATE TRIGGER messages_fts_update AFTER UPDATE OF text ON messages BEGIN
        INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
        INSERT INTO messages_fts(rowid, text) VALUES (new.id, new.text);
    END;
    """,
    # 2: one index that answers per-conversation counts and token sums (the conversation list,
    # the tokens after a summary's coverage) from the index alone, without reading the rows.
    # Its (conversation_id, id) prefix serves every range scan the old index served.
    """
    CREATE INDEX messages_conversation_tokens ON messages(conversation_id, id, token_count);
    DROP INDEX messages_conversation;
    """,
    # 3: why a reply failed ("what happened — what to do"), so the reason survives a restart.
    """
    ALTER TABLE messages ADD COLUMN error TEXT;
    """,
    # 4: the unsent draft of each conversation, so it survives quitting and reopening.
    """
    CREATE TABLE drafts (
        conversation_id TEXT PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE,
        text TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    """,
    # 5: the send lease: one sender per conversation at a time across processes (each reply
    # follows its own question), and what tells a live stream from one a dead process left.
    """
    CREATE TABLE send_leases (
        conversation_id TEXT PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE,
        owner TEXT NOT NULL,
        expires_at REAL NOT NULL
    );
    """,
    # 6: what each summary call cost (tokens by kind and dollars at the model's prices), the
    # ``server`` summarizer's compaction block exactly as received, and the models whose
    # endpoint refused on-demand compaction (the ``claude`` summarizer stands in for them).
    """
    ALTER TABLE summaries ADD COLUMN call_model TEXT;
    ALTER TABLE summaries ADD COLUMN call_input_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE summaries ADD COLUMN call_cache_read_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE summaries ADD COLUMN call_cache_write_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE summaries ADD COLUMN call_output_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE summaries ADD COLUMN call_cost_usd REAL NOT NULL DEFAULT 0;
    ALTER TABLE summaries ADD COLUMN compaction_block TEXT;
    CREATE TABLE compaction_support (
        model TEXT PRIMARY KEY,
        reason TEXT NOT NULL,
        noted_at TEXT NOT NULL
    );
    """,
    # 7: each conversation's message count, token sum and last message time, kept by triggers
    # on every write (the app's, an import's, a bulk SQL insert's), so the conversation list
    # reads one row per conversation instead of counting every message of every conversation.
    # Messages are deleted only with their conversation; the newest one's time is then found
    # through the (conversation_id, id) index.
    """
    CREATE TABLE conversation_totals (
        conversation_id TEXT PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE,
        messages INTEGER NOT NULL DEFAULT 0,
        tokens INTEGER NOT NULL DEFAULT 0,
        last_message_at TEXT
    );
    INSERT INTO conversation_totals (conversation_id, messages, tokens, last_message_at)
        SELECT conversation_id, count(*), IFNULL(sum(token_count), 0), max(created_at)
        FROM messages GROUP BY conversation_id;
    CREATE TRIGGER conversation_totals_insert AFTER INSERT ON messages BEGIN
        INSERT INTO conversation_totals (conversation_id, messages, tokens, last_message_at)
        VALUES (new.conversation_id, 1, new.token_count, new.created_at)
        ON CONFLICT (conversation_id) DO UPDATE SET
            messages = messages + 1,
            tokens = tokens + excluded.tokens,
            last_message_at = max(IFNULL(last_message_at, ''), excluded.last_message_at);
    END;
    CREATE TRIGGER conversation_totals_delete AFTER DELETE ON messages BEGIN
        UPDATE conversation_totals SET
            messages = messages - 1,
            tokens = tokens - old.token_count,
            last_message_at = (
                SELECT created_at FROM messages WHERE conversation_id = old.conversation_id
                ORDER BY id DESC LIMIT 1
            )
        WHERE conversation_id = old.conversation_id;
    END;
    CREATE TRIGGER conversation_totals_tokens AFTER UPDATE OF token_count ON messages BEGIN
        UPDATE conversation_totals SET tokens = tokens - old.token_count + new.token_count
        WHERE conversation_id = new.conversation_id;
    END;
    CREATE TRIGGER conversation_totals_gone AFTER DELETE ON conversations BEGIN
        DELETE FROM conversation_totals WHERE conversation_id = old.id;
    END;
    """,
    # 8: each summary version's identifier ledger: the exact identifiers of the
    # span it covers, with the ids of the messages where they occur, as JSON.
    """
    ALTER TABLE summaries ADD COLUMN ledger TEXT NOT NULL DEFAULT '[]';
    """,
    # 9: attached files, stored once by content hash (messages keep reference blocks naming
    # the hash), and forks: the conversation and message a conversation was forked from.
    """
    CREATE TABLE attachments (
        sha256 TEXT PRIMARY KEY,
        media_type TEXT NOT NULL,
        size INTEGER NOT NULL,
        data BLOB NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE TABLE forks (
        conversation_id TEXT PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE,
        parent_id TEXT REFERENCES conversations(id) ON DELETE SET NULL,
        parent_message_id INTEGER,
        created_at TEXT NOT NULL
    );
    CREATE INDEX forks_parent ON forks(parent_id);
    """,
    # 10: the replies still marked streaming, found without reading every message: opening a
    # database settles the ones a dead process left, and that scan took 130 ms at 200,000
    # messages on every start. The index holds only the (few) streaming rows.
    """
    CREATE INDEX messages_streaming ON messages(conversation_id) WHERE status = 'streaming';
    """,
    # 11: the files attached to a draft (reference blocks; their bytes are in ``attachments``),
    # kept with its text across quits and conversation switches; and what each import was made
    # from (the file's hash), so the same file imported again is noticed instead of copied.
    """
    ALTER TABLE drafts ADD COLUMN files TEXT NOT NULL DEFAULT '[]';
    CREATE TABLE imports (
        conversation_id TEXT PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE,
        sha256 TEXT NOT NULL,
        imported_at TEXT NOT NULL
    );
    CREATE INDEX imports_sha256 ON imports(sha256);
    """,
    # 12: the endpoint's model list (``GET /v1/models``: window, output limit, capabilities)
    # per endpoint, refreshed at most daily and on demand; the model table is the fallback.
    """
    CREATE TABLE model_catalog (
        endpoint TEXT NOT NULL,
        model TEXT NOT NULL,
        position INTEGER NOT NULL,
        data TEXT NOT NULL,
        fetched_at TEXT NOT NULL,
        PRIMARY KEY (endpoint, model)
    );
    """,
    # 13: each conversation's revision: counted up by every write that can change the request
    # built for it (its messages, pins and summary versions; its model, system prompt,
    # settings and active version), whichever process writes. The engine keeps what it built
    # for a conversation as long as the revision is the same (one rule, no hand-placed
    # invalidation). Title, archive and draft writes leave it alone.
    """
    ALTER TABLE conversations ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
    CREATE TRIGGER revision_message_insert AFTER INSERT ON messages BEGIN
        UPDATE conversations SET revision = revision + 1 WHERE id = new.conversation_id;
    END;
    CREATE TRIGGER revision_message_update AFTER UPDATE ON messages BEGIN
        UPDATE conversations SET revision = revision + 1 WHERE id = new.conversation_id;
    END;
    CREATE TRIGGER revision_message_delete AFTER DELETE ON messages BEGIN
        UPDATE conversations SET revision = revision + 1 WHERE id = old.conversation_id;
    END;
    CREATE TRIGGER revision_anchor_insert AFTER INSERT ON anchors BEGIN
        UPDATE conversations SET revision = revision + 1 WHERE id = new.conversation_id;
    END;
    CREATE TRIGGER revision_anchor_update AFTER UPDATE ON anchors BEGIN
        UPDATE conversations SET revision = revision + 1 WHERE id = new.conversation_id;
    END;
    CREATE TRIGGER revision_anchor_delete AFTER DELETE ON anchors BEGIN
        UPDATE conversations SET revision = revision + 1 WHERE id = old.conversation_id;
    END;
    CREATE TRIGGER revision_summary_insert AFTER INSERT ON summaries BEGIN
        UPDATE conversations SET revision = revision + 1 WHERE id = new.conversation_id;
    END;
    CREATE TRIGGER revision_summary_update AFTER UPDATE ON summaries BEGIN
        UPDATE conversations SET revision = revision + 1 WHERE id = new.conversation_id;
    END;
    CREATE TRIGGER revision_summary_delete AFTER DELETE ON summaries BEGIN
        UPDATE conversations SET revision = revision + 1 WHERE id = old.conversation_id;
    END;
    CREATE TRIGGER revision_conversation
        AFTER UPDATE OF model, system_prompt, settings, active_summary_id ON conversations BEGIN
        UPDATE conversations SET revision = revision + 1 WHERE id = new.id;
    END;
    """,
    # 14: branches: a fork is a branch of its parent's family. ``family_id``
    # is the id the family's first conversation had (kept when that one is deleted);
    # ``shared`` counts the messages a branch shares with its parent (its copies, in order).
    # A fork inserted without them (tui-chat, an import) gets them from its parent; a deleted
    # branch's children move to its first child, which takes its place. ``family_views``: the
    # branch each family shows when opened (the one last viewed or switched to).
    """
    ALTER TABLE forks ADD COLUMN family_id TEXT;
    ALTER TABLE forks ADD COLUMN shared INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX forks_family ON forks(family_id);
    CREATE TABLE family_views (
        family_id TEXT PRIMARY KEY,
        conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        viewed_at TEXT NOT NULL
    );
    UPDATE forks SET shared = CASE
        WHEN parent_id IS NULL OR parent_message_id IS NULL THEN 0
        ELSE (SELECT count(*) FROM messages m
              WHERE m.conversation_id = forks.parent_id AND m.id <= forks.parent_message_id)
        END;
    WITH RECURSIVE chain(id, ancestor, depth) AS (
        SELECT conversation_id, parent_id, 1 FROM forks WHERE parent_id IS NOT NULL
        UNION ALL
        SELECT chain.id, f.parent_id, chain.depth + 1 FROM chain
        JOIN forks f ON f.conversation_id = chain.ancestor
        WHERE f.parent_id IS NOT NULL AND chain.depth < 10000
    )
    UPDATE forks SET family_id = IFNULL(
        (SELECT ancestor FROM chain WHERE chain.id = forks.conversation_id
         ORDER BY depth DESC LIMIT 1),
        conversation_id);
    CREATE TRIGGER fork_family AFTER INSERT ON forks WHEN new.family_id IS NULL BEGIN
        UPDATE forks SET
            family_id = COALESCE(
                (SELECT p.family_id FROM forks p WHERE p.conversation_id = new.parent_id),
                new.parent_id, new.conversation_id),
            shared = CASE
                WHEN new.parent_id IS NULL OR new.parent_message_id IS NULL THEN 0
                ELSE (SELECT count(*) FROM messages m
                      WHERE m.conversation_id = new.parent_id AND m.id <= new.parent_message_id)
                END
        WHERE conversation_id = new.conversation_id;
    END;
    CREATE TRIGGER branch_deleted BEFORE DELETE ON conversations
    WHEN EXISTS (SELECT 1 FROM forks WHERE parent_id = old.id) BEGIN
        UPDATE forks SET
            shared = min(shared, (SELECT h.shared FROM forks h WHERE h.parent_id = old.id
                                  ORDER BY h.created_at, h.conversation_id LIMIT 1)),
            parent_id = (SELECT h.conversation_id FROM forks h WHERE h.parent_id = old.id
                         ORDER BY h.created_at, h.conversation_id LIMIT 1)
        WHERE parent_id = old.id AND conversation_id != (
            SELECT h.conversation_id FROM forks h WHERE h.parent_id = old.id
            ORDER BY h.created_at, h.conversation_id LIMIT 1);
        UPDATE forks SET parent_message_id = CASE WHEN shared = 0 THEN NULL ELSE
            (SELECT m.id FROM messages m WHERE m.conversation_id = forks.parent_id
             AND (SELECT count(*) FROM messages k WHERE k.conversation_id = m.conversation_id
                  AND k.id <= m.id) = forks.shared ORDER BY m.id LIMIT 1) END
        WHERE parent_id = (SELECT h.conversation_id FROM forks h WHERE h.parent_id = old.id
                           ORDER BY h.created_at, h.conversation_id LIMIT 1);
        UPDATE forks SET
            parent_id = (SELECT x.parent_id FROM forks x WHERE x.conversation_id = old.id),
            shared = min(shared, IFNULL((SELECT x.shared FROM forks x
                                         WHERE x.conversation_id = old.id
                                         AND x.parent_id IS NOT NULL), 0)),
            parent_message_id = CASE WHEN min(shared, IFNULL((SELECT x.shared FROM forks x
                    WHERE x.conversation_id = old.id AND x.parent_id IS NOT NULL), 0)) = 0
                THEN NULL ELSE (SELECT m.id FROM messages m
                WHERE m.conversation_id = (SELECT x.parent_id FROM forks x
                                           WHERE x.conversation_id = old.id)
                AND (SELECT count(*) FROM messages k WHERE k.conversation_id = m.conversation_id
                     AND k.id <= m.id) = min(forks.shared, (SELECT x.shared FROM forks x
                                                             WHERE x.conversation_id = old.id))
                ORDER BY m.id LIMIT 1) END
        WHERE parent_id = old.id;
    END;
    """,
    # 15: the Files API: per endpoint (its base URL), whether it takes
    # uploads, and the ``file_id`` each attached file (by content hash) was uploaded as.
    """
    CREATE TABLE file_endpoints (
        endpoint TEXT PRIMARY KEY, supported INTEGER NOT NULL, reason TEXT, noted_at TEXT NOT NULL
    );
    CREATE TABLE file_ids (
        endpoint TEXT NOT NULL, sha256 TEXT NOT NULL, file_id TEXT NOT NULL,
        uploaded_at TEXT NOT NULL, PRIMARY KEY (endpoint, sha256)
    );
    """,
    # 16: the revision counts only what can change a request: a version's writes while it is
    # in progress (its worker renewing or taking over the compaction lease) leave it alone,
    # since an in-progress version is never sent; its completion or failure still counts, as
    # does every write to a finished version.
    """
    DROP TRIGGER revision_summary_update;
    CREATE TRIGGER revision_summary_update AFTER UPDATE ON summaries
        WHEN old.status != 'in_progress' OR new.status != 'in_progress' BEGIN
        UPDATE conversations SET revision = revision + 1 WHERE id = new.conversation_id;
    END;
    """,
    # 17: MCP tools: the "always allow" a person gave a tool or a whole server (``tool`` ''),
    # kept across sessions until revoked, and the servers switched off in a conversation.
    """
    CREATE TABLE tool_approvals (
        server TEXT NOT NULL, tool TEXT NOT NULL DEFAULT '', granted_at TEXT NOT NULL,
        PRIMARY KEY (server, tool)
    );
    CREATE TABLE conversation_tools_off (
        conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        server TEXT NOT NULL, PRIMARY KEY (conversation_id, server)
    );
    """,
    # 18: cache diagnostics: each reply's API message id (``msg_…``), which the next request
    # names as ``diagnostics.previous_message_id``; the reply's ``cache_miss_reason`` is kept
    # in its ``usage`` JSON (``cache_miss``, ``cache_missed_tokens``).
    """
    ALTER TABLE messages ADD COLUMN api_id TEXT;
    """,
    # 19: messages can be deleted; a summary version whose coverage reached a deleted message
    # says so (why it is stale) until it is regenerated.
    """
    ALTER TABLE summaries ADD COLUMN stale TEXT;
    """,
)

LATEST_VERSION = len(MIGRATIONS)
"""The schema version this build of tui-chat writes."""
