-- A schema-4 audit store, written by the store code of commit 43379f9 (before issue 51's schema 5)
-- and dumped with sqlite3 .dump: owners that are bare names (ana@example.org, the local analyst 'local', and
-- 'sub|with|bars', a name holding the separator), a share with bob@example.org, a link, its opening and a refusal.
-- tests/test_store_identity.py opens it with the current code: the migration to schema 5 runs on it.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE store_schema (
	version INTEGER NOT NULL
);
INSERT INTO store_schema VALUES(4);
CREATE TABLE audits (
	seq INTEGER NOT NULL, 
	id VARCHAR(32) NOT NULL, 
	name VARCHAR(200) NOT NULL, 
	model VARCHAR(200), 
	model_version VARCHAR(200), 
	period VARCHAR(200), 
	saved_by VARCHAR(200), 
	tool_version VARCHAR(64), 
	created VARCHAR(32) NOT NULL, 
	source TEXT NOT NULL, 
	notes TEXT NOT NULL, 
	positive_outcome TEXT NOT NULL, 
	positive_is VARCHAR(16), 
	group_columns TEXT NOT NULL, 
	provenance TEXT NOT NULL, 
	has_group_values BOOLEAN NOT NULL, 
	tolerance FLOAT NOT NULL, 
	alpha FLOAT NOT NULL, 
	adjust VARCHAR(8) NOT NULL, 
	n_groups INTEGER NOT NULL, 
	n BIGINT NOT NULL, 
	has_outcomes BOOLEAN DEFAULT 1 NOT NULL, 
	unknown_groups TEXT DEFAULT '[]' NOT NULL, 
	owner VARCHAR(254) DEFAULT 'local' NOT NULL, 
	kind VARCHAR(16) DEFAULT 'binary' NOT NULL, 
	payload TEXT, 
	PRIMARY KEY (seq), 
	UNIQUE (id)
);
INSERT INTO audits VALUES(1,'7QJ3Era0KomrWkajcuuHjg','ana''s Q1','credit',NULL,'2026-Q1','ana@example.org','0.1.0','2026-02-01T09:00:01.000000+00:00','q1.csv','[]','the beneficial outcome','benefit','[]','{}',0,0.050000000000000002775,0.050000000000000002775,'holm',2,200,1,'[]','ana@example.org','binary',NULL);
INSERT INTO audits VALUES(2,'6MV8I-M99ZXS7FXmo8SoNA','ana''s Q2','credit',NULL,'2026-Q2','ana@example.org','0.1.0','2026-02-01T09:00:03.000000+00:00','q2.csv','[]','the beneficial outcome','benefit','[]','{}',0,0.050000000000000002775,0.050000000000000002775,'holm',2,200,1,'[]','ana@example.org','binary',NULL);
INSERT INTO audits VALUES(3,'x8zy5jucfP-c0AkwMxJU0A','local audit','credit',NULL,'2026-Q1','local','0.1.0','2026-02-01T09:00:05.000000+00:00','local.csv','[]','the beneficial outcome','harm','[]','{}',0,0.050000000000000002775,0.050000000000000002775,'holm',2,32,1,'[]','local','binary',NULL);
INSERT INTO audits VALUES(4,'cjVFkUtQmZMmPblEApA_6Q','sub with a bar',NULL,NULL,NULL,'sub|with|bars','0.1.0','2026-02-01T09:00:07.000000+00:00','pipe.csv','[]','the beneficial outcome','benefit','[]','{}',0,0.050000000000000002775,0.050000000000000002775,'holm',2,36,1,'[]','sub|with|bars','binary',NULL);
CREATE TABLE audit_events (
	seq INTEGER NOT NULL, 
	time VARCHAR(32) NOT NULL, 
	username VARCHAR(254), 
	action VARCHAR(16) NOT NULL, 
	audit_id VARCHAR(32), 
	allowed BOOLEAN NOT NULL, 
	detail TEXT NOT NULL, 
	PRIMARY KEY (seq)
);
INSERT INTO audit_events VALUES(1,'2026-02-01T09:00:02.000000+00:00','ana@example.org','save','7QJ3Era0KomrWkajcuuHjg',1,'ana''s Q1');
INSERT INTO audit_events VALUES(2,'2026-02-01T09:00:04.000000+00:00','ana@example.org','save','6MV8I-M99ZXS7FXmo8SoNA',1,'ana''s Q2');
INSERT INTO audit_events VALUES(3,'2026-02-01T09:00:06.000000+00:00','local','save','x8zy5jucfP-c0AkwMxJU0A',1,'local audit');
INSERT INTO audit_events VALUES(4,'2026-02-01T09:00:08.000000+00:00','sub|with|bars','save','cjVFkUtQmZMmPblEApA_6Q',1,'sub with a bar');
INSERT INTO audit_events VALUES(5,'2026-02-01T09:00:10.000000+00:00','ana@example.org','share','7QJ3Era0KomrWkajcuuHjg',1,'bob@example.org');
INSERT INTO audit_events VALUES(6,'2026-02-01T09:00:12.000000+00:00','ana@example.org','link','6MV8I-M99ZXS7FXmo8SoNA',1,'link 1590a5c87484 until 2027-02-01T09:00:11.000000+00:00');
INSERT INTO audit_events VALUES(7,'2026-02-01T09:00:14.000000+00:00',NULL,'open_link','6MV8I-M99ZXS7FXmo8SoNA',1,'link 1590a5c87484');
INSERT INTO audit_events VALUES(8,'2026-02-01T09:00:15.000000+00:00','eve@example.org','load','7QJ3Era0KomrWkajcuuHjg',0,'private to another user');
CREATE TABLE audit_groups (
	audit_seq INTEGER NOT NULL, 
	position INTEGER NOT NULL, 
	name TEXT NOT NULL, 
	tp BIGINT NOT NULL, 
	fn BIGINT NOT NULL, 
	fp BIGINT NOT NULL, 
	tn BIGINT NOT NULL, 
	group_values TEXT, 
	PRIMARY KEY (audit_seq, position), 
	FOREIGN KEY(audit_seq) REFERENCES audits (seq) ON DELETE CASCADE
);
INSERT INTO audit_groups VALUES(1,0,'a',30,2,9,59,NULL);
INSERT INTO audit_groups VALUES(1,1,'b',25,12,4,59,NULL);
INSERT INTO audit_groups VALUES(2,0,'a',31,3,9,57,NULL);
INSERT INTO audit_groups VALUES(2,1,'b',24,13,5,58,NULL);
INSERT INTO audit_groups VALUES(3,0,'F',5,1,2,7,NULL);
INSERT INTO audit_groups VALUES(3,1,'M',6,2,1,8,NULL);
INSERT INTO audit_groups VALUES(4,0,'x',9,1,2,7,NULL);
INSERT INTO audit_groups VALUES(4,1,'y',6,2,1,8,NULL);
CREATE TABLE audit_shares (
	audit_seq INTEGER NOT NULL, 
	username VARCHAR(254) NOT NULL, 
	created VARCHAR(32) NOT NULL, 
	PRIMARY KEY (audit_seq, username), 
	FOREIGN KEY(audit_seq) REFERENCES audits (seq) ON DELETE CASCADE
);
INSERT INTO audit_shares VALUES(1,'bob@example.org','2026-02-01T09:00:09.000000+00:00');
CREATE TABLE audit_links (
	token_hash VARCHAR(64) NOT NULL, 
	audit_seq INTEGER NOT NULL, 
	created_by VARCHAR(254) NOT NULL, 
	created VARCHAR(32) NOT NULL, 
	expires VARCHAR(32) NOT NULL, 
	revoked VARCHAR(32), 
	PRIMARY KEY (token_hash), 
	FOREIGN KEY(audit_seq) REFERENCES audits (seq) ON DELETE CASCADE
);
INSERT INTO audit_links VALUES('1590a5c87484832acce1a1294cbcb262a29fb2e1d6361f2dd224be5fcd5748dc',2,'ana@example.org','2026-02-01T09:00:11.000000+00:00','2027-02-01T09:00:11.000000+00:00',NULL);
CREATE INDEX ix_audits_owner ON audits (owner);
CREATE INDEX ix_audits_model ON audits (model);
CREATE INDEX ix_audit_events_audit_id ON audit_events (audit_id);
CREATE INDEX ix_audit_links_audit_seq ON audit_links (audit_seq);
COMMIT;
