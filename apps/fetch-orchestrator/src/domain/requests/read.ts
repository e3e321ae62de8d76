import { PublicError } from '@wdr/kit/errors';
import type { PgSql } from '@wdr/kit/pg-sql';
import { Prisma, type DataRequest } from '../../generated/prisma/client.js';
import { detailView, type RequestDetail } from './views.js';

/**
 * Every column of data_requests under its model name (`tenant_id AS "tenantId"`), from the model's
 * own field list: a column added to the model is read here too. The columns are the fields' names
 * in snake case (requestRow's test compares a full row with Prisma's).
 */
const REQUEST_COLUMNS = Object.values(Prisma.DataRequestScalarFieldEnum)
  .map((field) => `"${field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}" AS "${field}"`)
  .join(', ');
const REQUEST_BY_ID = `SELECT ${REQUEST_COLUMNS} FROM data_requests WHERE id = $1::uuid`;

/**
 * A request's row as Prisma's `findUnique` answers it (the same field names and values: uuids as
 * text, timestamps as Dates, JSON parsed), read on node-postgres: one prepared statement instead of
 * Prisma's query planning and result mapping, on the paths that read a row per page (a render job's
 * claim and result, a queued HTTP stage) and the detail a client polls. Null when there is no such request.
 */
export async function requestRow(sql: PgSql, id: string): Promise<DataRequest | null> {
  const [row] = await sql.rows<DataRequest>(REQUEST_BY_ID, [id]);
  return row ?? null;
}

/** A tenant's request as its detail shows it (GET …/requests/{id}, what a client polls): read with requestRow. */
export async function readRequest(sql: PgSql, tenantId: string, id: string): Promise<RequestDetail> {
  const r = await requestRow(sql, id);
  // Another tenant's request is indistinguishable from a missing one.
  if (!r || r.tenantId !== tenantId) throw new PublicError('NOT_FOUND', 'No such request.');
  return detailView(r);
}
