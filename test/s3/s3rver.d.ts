// Types for the parts of s3rver (an S3-compatible test server, no types of its own) the S3 tests use.
declare module 's3rver' {
  interface S3rverOptions {
    port?: number;
    address?: string;
    silent?: boolean;
    directory: string;
    configureBuckets?: Array<{ name: string }>;
  }
  export default class S3rver {
    constructor(options: S3rverOptions);
    run(): Promise<{ address: string; port: number }>;
    close(): Promise<void>;
    /** 'event': an S3 notification record per stored object (ObjectCreated:Put, or :Post for a completed multipart upload). */
    on(event: 'event', listener: (event: { Records: Array<{ eventName: string; s3: { object: { key: string } } }> }) => void): this;
  }
}
