-- A schema-3 audit store, written by the store code of commit 1cd27fd (before issue 53's schema 4) and dumped
-- with sqlite3 .dump: three audits (intersections with group values and settings 0.03/0.01/bh; a harm audit with
-- a model version and a link; decisions alone with an unknown category), a share, a link and their events.
-- tests/test_store_kinds.py opens it with the current code: the migration to schema 4 runs on it.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE store_schema (
	version INTEGER NOT NULL
);
INSERT INTO store_schema VALUES(3);
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
	PRIMARY KEY (seq), 
	UNIQUE (id)
);
INSERT INTO audits VALUES(1,'uGH_tUK4ruZOhLMKfGrgCQ','Q1 audit','credit',NULL,'2026-Q1','ana@example.org','0.1.0','2026-01-01T00:00:00.000000+00:00','loans.csv','["n < 30: wide CIs"]','approved','benefit','["race", "sex"]','{"label": "y", "threshold": "0.5"}',1,0.029999999999999998889,0.010000000000000000208,'bh',3,250,1,'[]','ana@example.org');
INSERT INTO audits VALUES(2,'wYbcDneLD7buaAnMsQellw','Q2 audit','credit','v2','2026-Q2','ana@example.org','0.1.0','2026-01-01T00:02:00.000000+00:00','q2.csv','[]','the beneficial outcome','harm','[]','{}',0,0.050000000000000002775,0.050000000000000002775,'holm',2,2000,1,'[]','ana@example.org');
INSERT INTO audits VALUES(3,'i84CD6k70Ng1cmyVVue90w','screening','hiring',NULL,'2026-Q1','local','0.1.0','2026-01-01T00:04:00.000000+00:00','decisions','["2 row(s) of ''sensitive_feature'' read as its unknown category (1 blank, 1 ''Decline to state''): counted and reported, never in the ratios and never the reference.", "No outcome column: the decisions (y_pred = 1) are audited alone."]','y_pred = 1','benefit','["sensitive_feature"]','{"label column": "none (decisions only)", "prediction column": "y_pred", "positive prediction": "1", "attribute(s) audited": "sensitive_feature", "unknown categories": "unknown — counted and reported, never in the ratios or the reference"}',0,0.050000000000000002775,0.050000000000000002775,'holm',3,8,0,'["unknown"]','local');
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
INSERT INTO audit_events VALUES(1,'2026-01-01T00:01:00.000000+00:00','ana@example.org','save','uGH_tUK4ruZOhLMKfGrgCQ',1,'Q1 audit');
INSERT INTO audit_events VALUES(2,'2026-01-01T00:03:00.000000+00:00','ana@example.org','save','wYbcDneLD7buaAnMsQellw',1,'Q2 audit');
INSERT INTO audit_events VALUES(3,'2026-01-01T00:05:00.000000+00:00','local','save','i84CD6k70Ng1cmyVVue90w',1,'screening');
INSERT INTO audit_events VALUES(4,'2026-01-01T00:07:00.000000+00:00','ana@example.org','share','uGH_tUK4ruZOhLMKfGrgCQ',1,'bob@example.org');
INSERT INTO audit_events VALUES(5,'2026-01-01T00:09:00.000000+00:00','ana@example.org','link','wYbcDneLD7buaAnMsQellw',1,'link 9d3f16c508c1 until 2027-01-01T00:08:00.000000+00:00');
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
INSERT INTO audit_groups VALUES(1,0,'Black & Female',30,5,8,57,'["Black", "Female"]');
INSERT INTO audit_groups VALUES(1,1,'White & Male',40,6,4,50,'["White", "Male"]');
INSERT INTO audit_groups VALUES(1,2,'<b>Asian</b> & Female',20,3,3,24,'["<b>Asian</b>", "Female"]');
INSERT INTO audit_groups VALUES(2,0,'a',300,20,90,590,NULL);
INSERT INTO audit_groups VALUES(2,1,'b',250,120,40,590,NULL);
INSERT INTO audit_groups VALUES(3,0,'F',1,0,0,2,NULL);
INSERT INTO audit_groups VALUES(3,1,'M',2,0,0,1,NULL);
INSERT INTO audit_groups VALUES(3,2,'unknown',1,0,0,1,NULL);
CREATE TABLE audit_shares (
	audit_seq INTEGER NOT NULL, 
	username VARCHAR(254) NOT NULL, 
	created VARCHAR(32) NOT NULL, 
	PRIMARY KEY (audit_seq, username), 
	FOREIGN KEY(audit_seq) REFERENCES audits (seq) ON DELETE CASCADE
);
INSERT INTO audit_shares VALUES(1,'bob@example.org','2026-01-01T00:06:00.000000+00:00');
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
INSERT INTO audit_links VALUES('9d3f16c508c192d09b6d58fc7a24c1ac1926c918ca423f1ee9713f323f90fd7b',2,'ana@example.org','2026-01-01T00:08:00.000000+00:00','2027-01-01T00:08:00.000000+00:00',NULL);
CREATE INDEX ix_audits_owner ON audits (owner);
CREATE INDEX ix_audits_model ON audits (model);
CREATE INDEX ix_audit_events_audit_id ON audit_events (audit_id);
CREATE INDEX ix_audit_links_audit_seq ON audit_links (audit_seq);
COMMIT;
