-- Checks the rows stored before migration 007 against its constraints; this takes a lock that lets
-- reads and writes go on while the tables are scanned.
ALTER TABLE sources VALIDATE CONSTRAINT sources_type_check;
ALTER TABLE charges VALIDATE CONSTRAINT charges_status_check;
ALTER TABLE refunds VALIDATE CONSTRAINT refunds_status_check;
