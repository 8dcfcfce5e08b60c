-- A charge's view is made of its row, its source's row and its refunds' rows. Rendered views are
-- kept and known to be current by the row versions (xmin) of the charge and its source alone, so
-- every write of a refund must write its charge's row as well. The refund operations patch the
-- charge in the same transaction; this trigger makes it hold for every write, the recovery
-- sweep's claim of a pending refund included. The touch changes no column, so the view stays as
-- it was and only its version moves on.
CREATE FUNCTION refunds_touch_charge() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE charges SET id = id WHERE id = NEW.charge_id;
  RETURN NULL;
END
$$;
CREATE TRIGGER refunds_touch_charge AFTER INSERT OR UPDATE ON refunds
  FOR EACH ROW EXECUTE FUNCTION refunds_touch_charge();
