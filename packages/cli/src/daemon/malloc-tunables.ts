/**
 * The glibc allocator settings the `baton` command starts node with (its first, shell, line sets `GLIBC_TUNABLES` to
 * this unless the variable is already set): two malloc arenas for all threads, and a fixed 128 KiB threshold above
 * which allocations get their own mapping and a free heap top is given back. With glibc's defaults (an arena per
 * thread, a threshold that grows with the largest buffer freed) a daemon that served a burst of sessions keeps tens of
 * MiB of freed but fragmented heap for good.
 */
export const MALLOC_TUNABLES = 'glibc.malloc.arena_max=2:glibc.malloc.trim_threshold=131072:glibc.malloc.mmap_threshold=131072';
