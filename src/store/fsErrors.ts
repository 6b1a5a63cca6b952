/** Plain words for the file-system errors a store can meet, shared by its writers. */
const ERROR_TEXT: Record<string, string> = {
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is exceeded',
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EIO: 'an I/O error occurred',
  EFBIG: 'the file is too large',
  EBADF: 'the file is not open for writing',
  ENOTDIR: 'a path component is not a directory',
  EEXIST: 'a file is in the way',
};

/** Why a file operation failed, in words, with its code when it has one. */
export function describeFsError(code: string | undefined, cause: unknown): string {
  return (code && ERROR_TEXT[code]) ?? (cause instanceof Error ? cause.message : String(cause));
}

/** The `code` of a Node file-system error (`ENOENT`, `ENOSPC`…), if it has one. */
export function errorCode(e: unknown): string | undefined {
  const c = (e as { code?: unknown } | null)?.code;
  return typeof c === 'string' ? c : undefined;
}
