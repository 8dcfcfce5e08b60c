-- where the payer returns after a payer step on a source that has no redirect of its own
ALTER TABLE charges ADD COLUMN redirect_url text CHECK (char_length(redirect_url) <= 2048);
