/** The part of `fs-native-extensions` Baton uses (the package ships no type declarations). */
declare module 'fs-native-extensions' {
  /**
   * Takes a lock on the open file `fd` without waiting (exclusive unless `shared`): true when taken, false when
   * another open file holds a conflicting lock. On Linux it is an open-file-description lock: it belongs to this
   * opening of the file, and the kernel drops it when the descriptor is closed or the process ends in any way.
   */
  export function tryLock(fd: number, options?: { readonly shared?: boolean }): boolean;
}
