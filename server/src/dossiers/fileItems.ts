import type { AppDeps } from '../context';
import type { FileKind } from '../db/schema';
import { downloadPath, presignFileUrl } from '../files/presign';
import { dossierFiles, type NewestFile } from '../files/queries';

/**
 * The spec's file item. The creation response has the short form; lookup, file listing and task
 * detail add `ecmClassCode` (omitted when the file has none), `size` and `mimeType` of the
 * newest version.
 */
export interface FileItem {
  id: number;
  fileUuid: string;
  title: string;
  type: FileKind;
  ecmClassCode?: string;
  size?: number;
  mimeType?: string;
  /** Presigned, valid 24 hours, always serves the newest version. */
  url: string;
  /** Relative path of the download endpoint; never expires. */
  downloadUrl: string;
}

export interface DossierFileItems {
  /** MAIN files (signed), in the order they were sent. */
  files: FileItem[];
  /** ATTACHMENT files (not signed), in the order they were sent. */
  attachments: FileItem[];
}

type FileItemDeps = Pick<AppDeps, 'db' | 'config' | 'clock' | 'secrets'>;

export function toFileItem(deps: FileItemDeps, file: NewestFile, detailed: boolean): FileItem {
  const details = detailed
    ? {
        ...(file.ecmClassCode !== null ? { ecmClassCode: file.ecmClassCode } : {}),
        size: file.size,
        mimeType: file.mimeType,
      }
    : {};
  return {
    id: file.id,
    fileUuid: file.uuid,
    title: file.title,
    type: file.kind,
    ...details,
    url: presignFileUrl(deps, file.uuid),
    downloadUrl: downloadPath(file.uuid),
  };
}

/**
 * The file items of a dossier, split into `files` (MAIN) and `attachments`. `detailed: false`
 * is the creation response; `detailed: true` the lookup, file listing and task detail.
 */
export async function fileItems(
  deps: FileItemDeps,
  dossierId: number,
  options: { detailed: boolean },
): Promise<DossierFileItems> {
  const rows = await dossierFiles(deps.db, dossierId);
  const items = rows.map((row) => toFileItem(deps, row, options.detailed));
  return {
    files: items.filter((item) => item.type === 'MAIN'),
    attachments: items.filter((item) => item.type === 'ATTACHMENT'),
  };
}
