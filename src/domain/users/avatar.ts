/**
 * User avatars: the Service's AvatarUploader rules (image extensions only, at most 200 KB) and
 * where kiln keeps the file: KILN_DATA_DIR/uploads/-/system/user/avatar/<id>/<filename>, the
 * same path the entity's avatar_url names, so the file is served back from there.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { UploadedFile } from '../uploaded-file.ts';

export const AVATAR_EXTENSIONS = ['png', 'jpg', 'jpeg', 'gif', 'bmp', 'tiff', 'ico', 'webp'] as const;
const MAX_AVATAR_BYTES = 200 * 1024;

const CONTENT_TYPES: Record<string, string> = {
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', bmp: 'image/bmp',
  tiff: 'image/tiff', ico: 'image/vnd.microsoft.icon', webp: 'image/webp',
};

function extensionOf(filename: string): string {
  return path.extname(filename).slice(1).toLowerCase();
}

/** The validation text for an unacceptable avatar, or null. */
export function avatarError(file: UploadedFile): string | null {
  if (!(AVATAR_EXTENSIONS as readonly string[]).includes(extensionOf(file.filename))) {
    return `file format is not supported. Please try one of the following supported formats: ${AVATAR_EXTENSIONS.join(', ')}`;
  }
  if (file.data.length > MAX_AVATAR_BYTES) return 'is too big (should be at most 200 KB)';
  return null;
}

/** CarrierWave's sanitised file name: anything but letters, digits, '.', '_' and '-' becomes '_'. */
export function sanitizeFilename(filename: string): string {
  const base = path.basename(filename).replace(/[^a-zA-Z0-9._-]/g, '_');
  return base.replace(/^\.+/, '_') || 'avatar';
}

export function avatarDir(dataDir: string, userId: number): string {
  return path.join(dataDir, 'uploads', '-', 'system', 'user', 'avatar', String(userId));
}

/** Replaces the user's avatar file; returns the stored file name. */
export async function storeAvatar(dataDir: string, userId: number, file: UploadedFile): Promise<string> {
  const dir = avatarDir(dataDir, userId);
  const name = sanitizeFilename(file.filename);
  await fs.rm(dir, { recursive: true, force: true });
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, name), file.data);
  return name;
}

export async function removeAvatar(dataDir: string, userId: number): Promise<void> {
  await fs.rm(avatarDir(dataDir, userId), { recursive: true, force: true });
}

/** The stored avatar's bytes and content type, or null when there is none by that name. */
export async function readAvatar(dataDir: string, userId: number, filename: string): Promise<{ data: Buffer; contentType: string } | null> {
  if (filename !== path.basename(filename) || filename.startsWith('.')) return null;
  try {
    const data = await fs.readFile(path.join(avatarDir(dataDir, userId), filename));
    return { data, contentType: CONTENT_TYPES[extensionOf(filename)] ?? 'application/octet-stream' };
  } catch {
    return null;
  }
}
