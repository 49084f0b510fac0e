-- Issue 21 item 4: what a run's nodes were when it ran, beside the versions
-- the run records itself: HCA firmware ("fw_ver mlx5_0"), link rate and width
-- ("link mlx5_0/1"), kernel release ("kernel") and the topology fingerprint
-- ("topology"); a value the nodes disagree on lists each value with its hosts
-- (core/node_facts.h). `fabtrack diff` and a change point's what_changed name
-- the entries that differ. Runs stored before this have none ('{}').
ALTER TABLE runs ADD COLUMN node_facts jsonb NOT NULL DEFAULT '{}';
