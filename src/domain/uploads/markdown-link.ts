/**
 * How an uploaded file is linked from Markdown (the Service's Gitlab::FileMarkdownLinkBuilder and
 * Gitlab::FileTypeDetection): images, videos and audio are embedded (`![name](url)`, the name
 * without its extension), SVG files too but named in full; anything else is a plain link.
 */
import path from 'node:path';

const SAFE_IMAGE = ['png', 'jpg', 'jpeg', 'gif', 'bmp', 'tiff', 'ico', 'webp'];
const SAFE_VIDEO = ['mp4', 'm4v', 'mov', 'webm', 'ogv'];
const SAFE_AUDIO = ['mp3', 'oga', 'ogg', 'spx', 'wav'];
const DANGEROUS_IMAGE = ['svg'];

function extension(filename: string): string {
  return path.extname(filename).slice(1).toLowerCase();
}

/** Whether the file is shown inline (FileTypeDetection#embeddable?). */
export function isEmbeddable(filename: string): boolean {
  const ext = extension(filename);
  return SAFE_IMAGE.includes(ext) || SAFE_VIDEO.includes(ext) || SAFE_AUDIO.includes(ext);
}

/** FileMarkdownLinkBuilder#markdown_name. */
export function markdownName(filename: string): string {
  return isEmbeddable(filename) ? path.basename(filename, path.extname(filename)) : filename;
}

/** FileMarkdownLinkBuilder#markdown_link: `]` in the name escaped. */
export function markdownLink(filename: string, url: string): string {
  const link = `[${markdownName(filename).replace(/]/g, '\\]')}](${url})`;
  return isEmbeddable(filename) || DANGEROUS_IMAGE.includes(extension(filename)) ? `!${link}` : link;
}
