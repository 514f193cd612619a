//! Device memory for a problem's buffers, as CUDA and HIP workspaces lay it out.
//!
//! A workspace keeps, beside each buffer kernels see, a device copy of its initial contents,
//! which every reset (before and after each verification) copies back on the device. That
//! doubles what a problem needs: a problem whose buffers fit the device once, on a GPU that is
//! small or shared with other processes, would fail before measuring anything. So the copies
//! are made only while the device keeps room for what a tune allocates later ([`reserve`]);
//! a buffer without one is restored from host memory, slower (a host-to-device copy at each
//! reset), and the tune's report says which ([`restored_from_host`]). A problem whose buffers
//! do not fit even once gets one message that says what they need and what the device has
//! ([`does_not_fit`]).

use crate::limits::human_bytes;

/// Bytes kept free after the buffers' device copies: the L2 flush buffer (`flush_bytes`) and
/// a margin for the modules, local memory and verification counters of the configs to come
/// (1/64 of the device's memory, at least 256 MiB). The reference outputs are not reserved:
/// restoring a buffer from the host costs a copy at each of a verification's two resets,
/// comparing an output on the host one read-back, so device copies come first.
/// `KERNTUNE_DEVICE_COPIES=0` reserves everything (as on a full device), to test those paths.
pub fn reserve(total: usize, flush_bytes: usize) -> usize {
    if copies_disabled() {
        // Tests of the paths a full device takes: no copy, no reference, no rotation fits.
        return usize::MAX;
    }
    flush_bytes.saturating_add((total / 64).max(256 << 20))
}

/// Whether `KERNTUNE_DEVICE_COPIES=0` asks workspaces to behave as on a full device (no device
/// copy of a buffer, no reference on the device), to test those paths on any device.
pub fn copies_disabled() -> bool {
    std::env::var_os("KERNTUNE_DEVICE_COPIES").is_some_and(|v| v == "0")
}

/// Which buffers (by size in bytes) get a device copy, given `free` bytes on the device and
/// the [`reserve`] to keep: the largest first, each while it fits (a restore's cost grows with
/// the bytes it copies from the host). Empty buffers need none and count as kept.
pub fn plan_copies(sizes: &[usize], free: usize, reserve: usize) -> Vec<bool> {
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by(|&a, &b| sizes[b].cmp(&sizes[a]).then(a.cmp(&b)));
    let mut left = free.saturating_sub(reserve);
    let mut keep = vec![false; sizes.len()];
    for i in order {
        if sizes[i] <= left {
            left -= sizes[i];
            keep[i] = true;
        }
    }
    keep
}

/// Makes the device copies [`plan_copies`] fits for `buffers` (name and size of each, in the
/// workspace's order), on a device with `room` = `(free, total)` bytes, or `None` where the
/// device does not say (wgpu on Metal, DX12, llvmpipe): then every copy is tried, and only the
/// allocation that fails says the device is full. `copy(i)` allocates buffer `i`'s copy and
/// fills it, `false` when the allocation found no memory (it can where the plan fitted: the
/// memory is fragmented); the largest buffers are tried first. Returns the report's note when
/// some buffers are left to be restored from the host ([`restored_from_host`]).
pub fn make_copies(
    buffers: &[(&str, usize)],
    room: Option<(usize, usize)>,
    flush_bytes: usize,
    mut copy: impl FnMut(usize) -> Result<bool, crate::BackendError>,
) -> Result<Option<String>, crate::BackendError> {
    let sizes: Vec<usize> = buffers.iter().map(|b| b.1).collect();
    let keep = match room {
        Some((free, total)) => plan_copies(&sizes, free, reserve(total, flush_bytes)),
        None => vec![!copies_disabled(); sizes.len()],
    };
    let mut order: Vec<usize> = (0..sizes.len()).filter(|&i| sizes[i] > 0).collect();
    order.sort_by(|&a, &b| sizes[b].cmp(&sizes[a]).then(a.cmp(&b)));
    let mut to_host = vec![false; sizes.len()];
    for i in order {
        to_host[i] = !(keep[i] && copy(i)?);
    }
    let from_host: Vec<(&str, usize)> = (0..sizes.len()).filter(|&i| to_host[i]).map(|i| buffers[i]).collect();
    if from_host.is_empty() {
        return Ok(None);
    }
    tracing::info!(?from_host, ?room, "buffers restored from host memory");
    Ok(Some(restored_from_host(&from_host, room.map(|r| r.0))))
}

/// Whether `bytes` more fit on a device with `free` bytes free while keeping `reserve`.
pub fn fits(bytes: usize, free: usize, reserve: usize) -> bool {
    bytes.checked_add(reserve).is_some_and(|n| n <= free)
}

/// The report's note for buffers restored from host memory: `(name, bytes)` of each, the
/// device's free memory when the workspace was made (`None` where the device does not say, and
/// its allocation of the copy failed).
pub fn restored_from_host(buffers: &[(&str, usize)], free: Option<usize>) -> String {
    let listed: Vec<String> = buffers.iter().map(|(n, b)| format!("{n} ({})", human_bytes(*b as u64))).collect();
    let total: usize = buffers.iter().map(|b| b.1).sum();
    format!(
        "device memory: no room for a device copy of {} ({}), so {} restored from host memory before and after each verification, {} copied from the host each time",
        listed.join(", "),
        match free {
            Some(free) => format!("the device had {} free beside the problem's buffers", human_bytes(free as u64)),
            None => "the device found no memory for it".into(),
        },
        if buffers.len() == 1 { "it is" } else { "they are" },
        human_bytes(total as u64),
    )
}

/// Whether the `need` bytes of the copies that rotating inputs takes fit ([`fits`] with the
/// [`reserve`]); `Err` with the report's note when they do not (L2 is then emptied by the
/// memset flush instead, for every config of the workspace alike).
pub fn rotation_fits(need: usize, free: usize, total: usize, flush_bytes: usize) -> Result<(), String> {
    if fits(need, free, reserve(total, flush_bytes)) {
        return Ok(());
    }
    Err(format!(
        "device memory: no room for the {} of copies that rotating inputs needs (the device has {} free), so L2 is emptied by a memset before each launch instead",
        human_bytes(need as u64),
        human_bytes(free as u64)
    ))
}

/// The report's note for reference outputs compared on the host for want of device memory.
pub fn compared_on_host(name: &str, bytes: usize) -> String {
    format!(
        "device memory: no room for the reference of output {name} ({}) on the device, so each verification reads {name} back and compares it on the host",
        human_bytes(bytes as u64)
    )
}

/// What `buffers` (`(name, bytes)` of each) need, as the messages say it: the total, then the
/// four largest by name (`8.0 GiB (x 4.0 GiB, y 4.0 GiB)`).
pub fn buffers_need(buffers: &[(&str, usize)]) -> String {
    let need: usize = buffers.iter().map(|b| b.1).sum();
    let mut largest: Vec<&(&str, usize)> = buffers.iter().filter(|b| b.1 > 0).collect();
    largest.sort_by_key(|b| std::cmp::Reverse(b.1));
    let shown: Vec<String> = largest.iter().take(4).map(|(n, b)| format!("{n} {}", human_bytes(*b as u64))).collect();
    let more = if largest.len() > 4 { format!(", and {} more", largest.len() - 4) } else { String::new() };
    format!("{} ({}{more})", human_bytes(need as u64), shown.join(", "))
}

/// The error for a problem whose buffers do not fit on the device: `buffers` are `(name,
/// bytes)` of each, `free` and `total` the device's memory before any was allocated.
pub fn does_not_fit(buffers: &[(&str, usize)], free: usize, total: usize) -> String {
    let others = total.saturating_sub(free);
    format!(
        "out of device memory: the problem's buffers need {}, and the device has {} free of {}{}; tune a smaller problem{}",
        buffers_need(buffers),
        human_bytes(free as u64),
        human_bytes(total as u64),
        if others > total / 10 { format!(" ({} taken by this and other processes)", human_bytes(others as u64)) } else { String::new() },
        if others > total / 10 { ", or free the GPU's memory" } else { "" },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: usize = 1 << 30;

    #[test]
    fn copies_go_to_the_largest_buffers_that_fit_and_keep_the_reserve() {
        // Everything fits: every buffer gets its copy.
        assert_eq!(plan_copies(&[GIB, 2 * GIB, 0], 10 * GIB, GIB), vec![true, true, true]);
        // Room for 5 GiB after the reserve: the 4 GiB buffer, then the 1 GiB one; not the 3.
        assert_eq!(plan_copies(&[GIB, 4 * GIB, 3 * GIB], 6 * GIB, GIB), vec![true, true, false]);
        // Exactly the reserve free: no copies but of empty buffers.
        assert_eq!(plan_copies(&[GIB, 0], GIB, GIB), vec![false, true]);
        // Less free than the reserve (another process holds the rest).
        assert_eq!(plan_copies(&[1], 0, GIB), vec![false]);
        // Equal sizes: the earlier buffer first.
        assert_eq!(plan_copies(&[2 * GIB, 2 * GIB], 3 * GIB, 0), vec![true, false]);
        assert!(fits(GIB, 2 * GIB, GIB) && !fits(GIB + 1, 2 * GIB, GIB) && !fits(usize::MAX, usize::MAX, 1));
    }

    #[test]
    fn copies_are_made_where_planned_and_the_rest_named() {
        let buffers = [("x", 4 * GIB), ("y", GIB), ("n", 0), ("z", 3 * GIB)];
        let mut asked = Vec::new();
        // Room for 5 GiB after a 1 GiB reserve of a 64 GiB device: x and y are copied, z is not.
        let note = make_copies(&buffers, Some((5 * GIB + GIB, 64 * GIB)), 0, |i| {
            asked.push(i);
            Ok(true)
        })
        .unwrap()
        .unwrap();
        assert_eq!(asked, [0, 1]);
        assert!(note.contains("copy of z (3.0 GiB)"), "{note}");
        // A copy that finds no memory after all leaves its buffer to the host too.
        let note = make_copies(&buffers, Some((64 * GIB, 64 * GIB)), 0, |i| Ok(i != 1)).unwrap().unwrap();
        assert!(note.contains("copy of y (1.0 GiB) (") && note.contains("so it is restored"), "{note}");
        assert_eq!(make_copies(&buffers, Some((64 * GIB, 64 * GIB)), 0, |_| Ok(true)).unwrap(), None);
        assert!(make_copies(&buffers, Some((64 * GIB, 64 * GIB)), 0, |_| Err(crate::BackendError::other("copy"))).is_err());
        // A device that does not say what is free: every copy is tried, largest first, and the
        // ones whose allocation failed are named in the workspace's order.
        let mut asked = Vec::new();
        let note = make_copies(&buffers, None, 0, |i| {
            asked.push(i);
            Ok(i == 0)
        })
        .unwrap()
        .unwrap();
        assert_eq!(asked, [0, 3, 1]);
        assert!(note.contains("copy of y (1.0 GiB), z (3.0 GiB) (the device found no memory for it)"), "{note}");
    }

    #[test]
    fn the_reserve_holds_the_flush_buffer_and_a_margin() {
        assert_eq!(reserve(80 * GIB, 100 << 20), (100 << 20) + 80 * GIB / 64);
        // A small device still keeps 256 MiB.
        assert_eq!(reserve(4 * GIB, 0), 256 << 20);
    }

    #[test]
    fn the_messages_name_the_buffers_their_sizes_and_what_to_do() {
        let m = does_not_fit(&[("x", 40 * GIB), ("y", 40 * GIB), ("n", 0)], 30 * GIB, 80 * GIB);
        assert_eq!(
            m,
            "out of device memory: the problem's buffers need 80.0 GiB (x 40.0 GiB, y 40.0 GiB), and the device has 30.0 GiB free of 80.0 GiB (50.0 GiB taken by this and other processes); tune a smaller problem, or free the GPU's memory"
        );
        let m = does_not_fit(&[("a", 1), ("b", 2), ("c", 3), ("d", 4), ("e", 5)], 0, 4);
        assert!(m.contains("(e 5 B, d 4 B, c 3 B, b 2 B, and 1 more)") && m.ends_with("; tune a smaller problem, or free the GPU's memory"), "{m}");
        let m = does_not_fit(&[("x", 100 * GIB)], 79 * GIB, 80 * GIB);
        assert!(m.ends_with("80.0 GiB; tune a smaller problem"), "{m}");
        let n = restored_from_host(&[("y", 40 * GIB)], Some(45 * GIB));
        assert!(n.contains("copy of y (40.0 GiB) (the device had 45.0 GiB free") && n.contains("so it is restored"), "{n}");
        let n = restored_from_host(&[("x", GIB), ("y", GIB)], Some(GIB));
        assert!(n.contains("x (1.0 GiB), y (1.0 GiB)") && n.contains("they are restored") && n.ends_with("2.0 GiB copied from the host each time"), "{n}");
        let n = restored_from_host(&[("y", GIB)], None);
        assert!(n.starts_with("device memory: no room for a device copy of y (1.0 GiB) (the device found no memory for it), so it is restored"), "{n}");
        assert!(compared_on_host("y", GIB).contains("output y (1.0 GiB)"));
        assert!(rotation_fits(GIB, 80 * GIB, 80 * GIB, 0).is_ok());
        let n = rotation_fits(8 * GIB, 4 * GIB, 80 * GIB, 0).unwrap_err();
        assert!(n.starts_with("device memory: no room for the 8.0 GiB of copies that rotating inputs needs (the device has 4.0 GiB free)"), "{n}");
    }
}
