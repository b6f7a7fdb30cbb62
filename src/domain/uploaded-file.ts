/** A file sent with a request (multipart), as the domain functions that store one take it. */
export interface UploadedFile {
  filename: string;
  mimetype: string;
  data: Buffer;
}
