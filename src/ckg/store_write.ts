/**
 * The insert path of the graph database (see `store.ts`): one file's row, then its symbols and
 * its references, each with the ids the rows before it got.
 */
import type { StatementSync } from "node:sqlite";
import type { ExtractedSymbol } from "./extract.ts";
import type { ExtractedRef } from "./edges.ts";
import type { FileRecord } from "./store_schema.ts";

/**
 * Records a file and replaces its symbols and references, inside the caller's transaction;
 * `prepare` gives the store's cached statement for a query.
 */
export function writeFile(
  prepare: (sql: string) => StatementSync,
  record: FileRecord,
  symbols: readonly ExtractedSymbol[],
  refs: readonly ExtractedRef[],
): void {
  const existing = prepare("SELECT id FROM files WHERE path = ?").get(record.path) as
    | { id: number }
    | undefined;
  let fileId: number;
  if (existing) {
    fileId = existing.id;
    prepare("DELETE FROM symbols WHERE file_id = ?").run(fileId);
    prepare("DELETE FROM refs WHERE file_id = ?").run(fileId);
    prepare(
      `UPDATE files SET language = ?, size = ?, mtime_ms = ?, hash = ?, status = ?, note = ?,
       symbols = ?, has_errors = ?, racy = ? WHERE id = ?`,
    ).run(
      record.language,
      record.size,
      record.mtimeMs,
      record.hash,
      record.status,
      record.note,
      symbols.length,
      record.hasErrors ? 1 : 0,
      record.racy ? 1 : 0,
      fileId,
    );
  } else {
    fileId = Number(
      prepare(
        `INSERT INTO files (path, language, size, mtime_ms, hash, status, note, symbols,
         has_errors, racy) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        record.path,
        record.language,
        record.size,
        record.mtimeMs,
        record.hash,
        record.status,
        record.note,
        symbols.length,
        record.hasErrors ? 1 : 0,
        record.racy ? 1 : 0,
      ).lastInsertRowid,
    );
  }
  const insert = prepare(
    `INSERT INTO symbols (file_id, kind, subkind, name, class_name, parent_function, parent_id,
     start_line, end_line, start_offset, end_offset, signature)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const ids: number[] = [];
  for (const s of symbols) {
    const parentId = s.parent >= 0 ? ids[s.parent] ?? null : null;
    ids.push(Number(
      insert.run(
        fileId,
        s.kind,
        s.subkind,
        s.name,
        s.className,
        s.parentFunction,
        parentId,
        s.startLine,
        s.endLine,
        s.startOffset,
        s.endOffset,
        s.signature,
      ).lastInsertRowid,
    ));
  }
  const insertRef = prepare(
    `INSERT INTO refs (file_id, kind, name, derived, line, col, start_offset, end_offset,
     symbol_id, anon_start, anon_end, anon_start_line, anon_end_line)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  for (const r of refs) {
    insertRef.run(
      fileId,
      r.kind,
      r.name,
      r.derived,
      r.line,
      r.column,
      r.startOffset,
      r.endOffset,
      r.enclosing >= 0 ? ids[r.enclosing] ?? null : null,
      r.anonymous?.startOffset ?? null,
      r.anonymous?.endOffset ?? null,
      r.anonymous?.startLine ?? null,
      r.anonymous?.endLine ?? null,
    );
  }
}
