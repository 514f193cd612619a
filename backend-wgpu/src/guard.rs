//! Guard words after each buffer: what CUDA's unmapped guard ranges catch by a fault, found on
//! wgpu by the words a launch changed, or read, past a buffer's end.
//!
//! wgpu never faults on an access past a buffer: naga clamps the index into the binding, or
//! the driver (Vulkan's robustBufferAccess2) drops the write and reads zero. A kernel whose
//! buffer the spec sized too small (a stencil's halo left out, a last block without a bounds
//! check) would then compute from zeros and write nowhere, every config alike, so that
//! verification against the reference config passes and the tune ends as if nothing were
//! wrong. So each buffer of a workspace is made longer than the spec sizes it by a guard
//! ([`crate::bench::guard_bytes`]: a sixteenth of it, at least 256 bytes and at most 64 KiB),
//! filled with a known word ([`crate::bench::fill_word`]: a NaN after a read-only buffer, a
//! finite number after one a kernel can write, which arithmetic on it moves), and bound whole:
//! an access just past the buffer's end lands in the guard. Restoring and poisoning a buffer
//! cover its data only; a guard is filled again where a check found it written.
//!
//! - **Writes**: after a verification launch (and the reference candidate's), and after the
//!   timing launches of a config no verification looks at (`--reference none`), a guard whose
//!   words changed says a launch wrote past that buffer ([`damage`]); the config fails
//!   (`out-of-bounds write past the end of …`), a reference candidate is replaced by the next.
//! - **Reads**: a read past the end reads the guard's word, the same in every config, so its
//!   outputs agree with a reference that reads there too. [`probe`] launches the config again
//!   with the guards filled with another word: outputs that change, the same way at each such
//!   launch and another way with a third word, read past a buffer (a race between threads
//!   changes them too, but not with the word), found by changing one buffer's guard at a time.
//!   The reference candidate is probed before its outputs are taken, and a config whose
//!   outputs differ from the reference's is probed before its failure is called a wrong
//!   output; `tune --memcheck` probes the winner.
//!
//! A binding whose length the shader asks (`arrayLength`) is bound at the buffer's own size,
//! so that the length the kernel reads is the spec's: past its end the guard sees nothing.

use crate::bench::{fill, fill_word, Buffers};
use kerntune_core::{Access, BackendError, Memcheck};

/// The words [`probe`] fills guards with to find reads: π as f32, and −1000.25 (another sign
/// and size, for the check that outputs follow the word read, not only that it changed).
const OTHER: [u32; 2] = [0x4049_0FDB, 0xC47A_1000];

/// The checker's name, as `tune --memcheck` and a diagnosis quote it.
pub(crate) fn tool() -> String {
    "kerntune's guard words (wgpu: 256 bytes to 64 KiB after each buffer, filled three ways)".into()
}

/// What a launch did to one buffer's guard.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Damage {
    /// The buffer's index.
    pub(crate) buffer: usize,
    /// How many of its guard's words changed, and how many it has.
    pub(crate) changed: u64,
    pub(crate) words: u64,
    /// How far past the buffer's end (bytes) the first changed word is.
    pub(crate) first: u64,
}

/// Whether the launches since the last check wrote past a buffer a kernel can write: the
/// failure's message ([`wrote_past`]) of the guards [`damage`] found changed.
pub(crate) fn written(device: &wgpu::Device, queue: &wgpu::Queue, ws: &mut Buffers) -> Result<Option<String>, BackendError> {
    let damage = damage(device, queue, ws)?;
    Ok((!damage.is_empty()).then(|| wrote_past(ws, &damage)))
}

/// The guards of the buffers a kernel can write that the launches since the last check
/// changed, read back in one copy; each is filled again (its writes land before the next
/// submission), so that the next check sees the next launches' alone.
fn damage(device: &wgpu::Device, queue: &wgpu::Queue, ws: &mut Buffers) -> Result<Vec<Damage>, BackendError> {
    let checked: Vec<usize> = (0..ws.buffers.len()).filter(|&i| ws.guards[i].1 > 0 && ws.access(i) != Access::Read).collect();
    let total: u64 = checked.iter().map(|&i| ws.guards[i].1).sum();
    if total == 0 {
        return Ok(Vec::new());
    }
    let read = ws
        .guards_read
        .get_or_insert_with(|| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("kerntune guards"),
                size: total,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        })
        .clone();
    let mut enc = device.create_command_encoder(&Default::default());
    let mut at = 0;
    for &i in &checked {
        let (from, len) = ws.guards[i];
        enc.copy_buffer_to_buffer(&ws.buffers[i], from, &read, at, len);
        at += len;
    }
    queue.submit([enc.finish()]);
    let bytes = crate::bench::read_buffer(device, &read, std::time::Duration::from_secs(60))?;
    let mut out = Vec::new();
    let mut at = 0usize;
    for &i in &checked {
        let len = ws.guards[i].1 as usize;
        let words = bytes[at..at + len].chunks_exact(4).map(|w| u32::from_le_bytes(w.try_into().expect("4 bytes")));
        let changed: Vec<usize> = words.enumerate().filter(|&(_, w)| w != ws.canary[i]).map(|(k, _)| k).collect();
        if let Some(&first) = changed.first() {
            out.push(Damage { buffer: i, changed: changed.len() as u64, words: len as u64 / 4, first: 4 * first as u64 });
        }
        at += len;
    }
    for d in &out {
        fill(queue, ws, d.buffer);
    }
    Ok(out)
}

/// The failure of a launch that wrote past buffers: one clause per buffer.
fn wrote_past(ws: &Buffers, damage: &[Damage]) -> String {
    let each: Vec<String> = damage
        .iter()
        .map(|d| {
            format!(
                "`{}` ({} bytes as the spec sizes it): the launch changed {} of the {} guard words kerntune keeps after it, {}",
                ws.name(d.buffer),
                ws.len(d.buffer),
                d.changed,
                d.words,
                match d.first {
                    0 => "from its very end".to_string(),
                    b => format!("the first {b} bytes past its end"),
                }
            )
        })
        .collect();
    format!("out-of-bounds write past the end of {}; size the buffer for every element the kernel writes, or check the kernel's bounds", each.join("; and of "))
}

/// One launch's outputs (the data of every buffer a kernel can write), or the failure of a
/// launch that wrote past a buffer.
type Launched = Result<Vec<Vec<u8>>, String>;

/// What [`probe`] found.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Found {
    /// The outputs did not change with the guards' words, and no guard was written.
    Within,
    /// It reads or writes past a buffer: the failure's message.
    Past(String),
    /// It cannot tell: why.
    Unsure(String),
}

impl Found {
    /// As the memory checker's verdict (`tune --memcheck`, a diagnosis).
    pub(crate) fn memcheck(self) -> Memcheck {
        match self {
            Found::Within => Memcheck::Clean { tool: tool() },
            Found::Past(report) => Memcheck::Reported { tool: tool(), report },
            Found::Unsure(why) => Memcheck::Inconclusive(why),
        }
    }
}

/// Launches a config again (`launch`: once, on the workspace as [`crate::bench::reset`] left
/// it, poisoned) to find whether it reads or writes past a buffer (see [`decide`]). The
/// workspace is left restored, every guard with its own word ([`fill_word`]).
pub(crate) fn probe(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    ws: &mut Buffers,
    launch: &mut dyn FnMut(&mut Buffers) -> Result<(), BackendError>,
) -> Result<Found, BackendError> {
    let n = ws.buffers.len();
    let guarded: Vec<usize> = (0..n).filter(|&i| ws.guards[i].1 > 0).collect();
    if guarded.is_empty() {
        return Ok(Found::Unsure("no buffer has guard words after it (each is as large as the device binds)".into()));
    }
    let names: Vec<String> = (0..n).map(|i| format!("`{}` ({} bytes as the spec sizes it)", ws.name(i), ws.len(i))).collect();
    // One launch with the guards of `other` filled with the other word, the rest with their own:
    // the outputs, or the failure of a write past a buffer.
    let mut run = |other: &[usize], word: usize| -> Result<Launched, BackendError> {
        fill_other(queue, ws, other, OTHER[word]);
        crate::bench::reset(device, queue, ws, true)?;
        launch(ws)?;
        if let Some(wrote) = written(device, queue, ws)? {
            return Ok(Err(wrote));
        }
        crate::bench::outputs(device, queue, ws).map(Ok)
    };
    let r = decide(&guarded, &mut run, &names);
    // Every guard back to its word, and the buffers to their initial contents.
    fill_other(queue, ws, &[], OTHER[0]);
    crate::bench::reset(device, queue, ws, false)?;
    r
}

/// Fills the guards of the buffers `other` names with `word` and the rest with their own
/// ([`fill_word`]), each whose word changes.
fn fill_other(queue: &wgpu::Queue, ws: &mut Buffers, other: &[usize], word: u32) {
    for i in 0..ws.buffers.len() {
        let word = if other.contains(&i) { word } else { fill_word(ws.access(i)) };
        if ws.canary[i] != word {
            ws.canary[i] = word;
            fill(queue, ws, i);
        }
    }
}

/// A launch with the guards of the buffers named filled with one of the [`OTHER`] words (its
/// index), the rest with their own: its outputs, or the failure of a write past a buffer.
type Launches<'a> = dyn FnMut(&[usize], usize) -> Result<Launched, BackendError> + 'a;

/// What the launches `run` makes say (`run(other, word)`: the outputs of a launch with the
/// guards of the buffers `other` names filled with `OTHER[word]`, or the failure of a write past
/// a buffer): with every guard filled with its own word, then with the other word; outputs that
/// differ read past a buffer, found by filling one buffer's guard at a time with the other word.
/// Only outputs that follow the word read are called a read past a buffer: the launches with
/// their own words agree, and so do those with the other word, and a third word gives outputs of
/// their own. A race between threads (a missing barrier) gives outputs that vary by themselves,
/// and may vary with a launch's history, the guards refilled or not: the reduction without its
/// first barrier was called a read past `x` and `partial` on llvmpipe, though it reads neither
/// past its end. `names`: each buffer as the messages name it.
fn decide(guarded: &[usize], run: &mut Launches<'_>, names: &[String]) -> Result<Found, BackendError> {
    let varies = || {
        Ok(Found::Unsure(
            "its outputs differ between two launches on the same inputs, and do not follow the words past its buffers (atomics, or a race between threads: a missing barrier, say), so what it reads past them cannot be told from them".into(),
        ))
    };
    let first = match run(&[], 0)? {
        Ok(o) => o,
        Err(wrote) => return Ok(Found::Past(wrote)),
    };
    let other = match run(guarded, 0)? {
        Err(wrote) => return Ok(Found::Past(wrote)),
        Ok(o) if o == first => return Ok(Found::Within),
        Ok(o) => o,
    };
    // Each fill again: the same outputs as before.
    for (guards, want) in [(&[][..], &first), (guarded, &other)] {
        match run(guards, 0)? {
            Err(wrote) => return Ok(Found::Past(wrote)),
            Ok(o) if &o != want => return varies(),
            Ok(_) => {}
        }
    }
    // The third word: outputs of their own, unlike both.
    match run(guarded, 1)? {
        Err(wrote) => return Ok(Found::Past(wrote)),
        Ok(o) if o == first || o == other => return varies(),
        Ok(_) => {}
    }
    let mut read = Vec::new();
    for &i in guarded {
        match run(&[i], 0)? {
            Err(wrote) => return Ok(Found::Past(wrote)),
            Ok(o) if o != first => read.push(i),
            Ok(_) => {}
        }
    }
    // And once more with their own words, after the launches that named the buffers.
    match run(&[], 0)? {
        Err(wrote) => return Ok(Found::Past(wrote)),
        Ok(o) if o != first => return varies(),
        Ok(_) => {}
    }
    let named: Vec<&str> = read.iter().map(|&i| names[i].as_str()).collect();
    let (them, verb) = if read.len() == 1 { ("it", "lies") } else { ("them", "lie") };
    Ok(Found::Past(if named.is_empty() {
        "out-of-bounds read past the end of its buffers: the outputs change with what lies after them (kerntune's guard words, filled three ways), though with no one buffer's alone; size each buffer for every element the kernel reads".into()
    } else {
        format!(
            "out-of-bounds read past the end of {}: the outputs change with what {verb} after {them} (kerntune's guard words, filled three ways); size {them} for every element the kernel reads (a stencil's halo, the grid's last block)",
            named.join(" and "),
        )
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Launches as `decide` asks for them: the outputs of each, from the guards filled with the
    /// other word (`outputs(other, nth)`), and the launches asked for.
    fn decided(guarded: &[usize], outputs: impl Fn(&[usize], usize) -> Launched) -> (Found, Vec<Vec<usize>>) {
        decided_by_word(guarded, |other, _, nth| outputs(other, nth))
    }

    /// As [`decided`], the outputs also given the word (`outputs(other, word, nth)`).
    fn decided_by_word(guarded: &[usize], outputs: impl Fn(&[usize], usize, usize) -> Launched) -> (Found, Vec<Vec<usize>>) {
        let mut asked = Vec::new();
        let names: Vec<String> = ["`a`", "`b`", "`c`"].map(String::from).to_vec();
        let found = decide(
            guarded,
            &mut |other: &[usize], word: usize| {
                asked.push(other.to_vec());
                Ok(outputs(other, word, asked.len() - 1))
            },
            &names,
        )
        .unwrap();
        (found, asked)
    }

    #[test]
    fn outputs_that_change_with_one_buffers_guard_read_past_it_and_no_other() {
        // Nothing read past: two launches.
        let (found, asked) = decided(&[0, 1, 2], |_, _| Ok(vec![vec![1, 2]]));
        assert_eq!((found, asked.len()), (Found::Within, 2));
        // `b` read past: its guard alone changes the outputs.
        // (The outputs follow the word read: 1 with the other word, 2 with the third.)
        let (found, asked) = decided_by_word(&[0, 1, 2], |other, word, _| Ok(vec![vec![other.contains(&1) as u8 * (word as u8 + 1)]]));
        assert_eq!(asked, [vec![], vec![0, 1, 2], vec![], vec![0, 1, 2], vec![0, 1, 2], vec![0], vec![1], vec![2], vec![]]);
        let Found::Past(m) = found else { panic!("{found:?}") };
        assert!(m.starts_with("out-of-bounds read past the end of `b`: the outputs change with what lies after it"), "{m}");
        // Both `a` and `c`.
        let (found, _) = decided_by_word(&[0, 1, 2], |other, word, _| {
            Ok(vec![vec![other.contains(&0) as u8 * (word as u8 + 1), other.contains(&2) as u8 * (word as u8 + 1)]])
        });
        assert!(matches!(&found, Found::Past(m) if m.contains("`a` and `c`: the outputs change with what lie after them")), "{found:?}");
        // Only together (a sum of reads past two buffers that cancels alone is not one): no name.
        let (found, _) = decided_by_word(&[0, 1], |other, word, _| Ok(vec![vec![(other.len() == 2) as u8 * (word as u8 + 1)]]));
        assert!(matches!(&found, Found::Past(m) if m.contains("though with no one buffer's alone")), "{found:?}");
    }

    #[test]
    fn outputs_that_vary_by_themselves_are_not_called_a_read_past() {
        // Every launch differs (a race): the third launch, like the first, tells.
        let (found, asked) = decided(&[0, 1], |_, nth| Ok(vec![vec![nth as u8]]));
        assert!(matches!(found, Found::Unsure(_)), "{found:?}");
        assert_eq!(asked.len(), 3);
        // A race whose outputs take one of two values at random: the first and third launches
        // agree by chance, the second and fourth (the other word) do not.
        let (found, asked) = decided(&[0, 1], |_, nth| Ok(vec![vec![[0, 1, 0, 2][nth.min(3)]]]));
        assert!(matches!(&found, Found::Unsure(m) if m.contains("a race between threads")), "{found:?}");
        assert_eq!(asked.len(), 4);
        // Or only the launches that name the buffers disagree, and the last with their own words.
        let (found, _) = decided_by_word(&[0, 1], |other, word, nth| Ok(vec![vec![if nth >= 6 { 9 } else { other.len().min(1) as u8 * (word as u8 + 1) }]]));
        assert!(matches!(found, Found::Unsure(_)), "{found:?}");
        // Outputs that change whenever the guards were filled with another word, but not with
        // which word (a race that follows the launch's history): not a read past a buffer.
        let (found, asked) = decided(&[0, 1], |other, _| Ok(vec![vec![!other.is_empty() as u8]]));
        assert!(matches!(&found, Found::Unsure(m) if m.contains("do not follow the words past its buffers")), "{found:?}");
        assert_eq!(asked.len(), 5);
    }

    #[test]
    fn a_write_past_a_buffer_is_said_at_once() {
        let (found, asked) = decided(&[0], |_, _| Err("out-of-bounds write past the end of `a`".into()));
        assert_eq!((found, asked.len()), (Found::Past("out-of-bounds write past the end of `a`".into()), 1));
    }
}
