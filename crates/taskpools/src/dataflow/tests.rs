//! Unit tests of the spawn path's rectangle mode and of footprints' byte rectangles.

use std::ptr;

use super::lut::Rect;
use super::*;

/// Whether each region of the scope's frame is still in rectangle mode.
fn rect_modes(df: &Scope<'_, '_>) -> Vec<bool> {
    // SAFETY (test): the frame's thread, and no other reference into its local state.
    let l = unsafe { df.frame().local() };
    l.regions.iter().map(|r| r.rects.is_some()).collect()
}

/// The spawn path takes tile accesses of an exact table in rectangle mode, leaves it at
/// the first one-row access, and starts it again after a sync; block tables never use it.
#[test]
fn exact_spawns_use_rectangle_mode_until_a_row_access() {
    let mut data = vec![0u32; 16 * 16];
    let mut other = vec![0u32; 64];
    scope_with(Config::exact(64).unwrap(), |df| {
        let r = df.region(&mut data[..]);
        let m = r.matrix(16, 16);
        let s = df.region(&mut other[..]);
        df.spawn((m.tile(0, 0, 4).inout(),), |_, (mut t,)| {
            t.row_mut(0)[0] += 1
        });
        df.spawn(
            (m.tile(0, 0, 4).read(), m.tile(1, 0, 4).inout()),
            |_, (a, mut b)| {
                b.row_mut(0)[0] += a.row(0)[0];
            },
        );
        assert_eq!(rect_modes(df), [true, true]);
        // A whole slice is one row: that region leaves, the other stays.
        df.spawn((s.all().inout(),), |_, (o,)| o[0] += 1);
        assert_eq!(rect_modes(df), [true, false]);
        // One row of the matrix ends it there too.
        df.spawn((m.sub(3, 0, 1, 16).read(),), |_, _| {});
        assert_eq!(rect_modes(df), [false, false]);
        df.sync();
        assert_eq!(rect_modes(df), [true, true]);
        df.spawn((m.tile(1, 1, 4).inout(),), |_, (mut t,)| {
            t.row_mut(3)[3] = 7
        });
        assert_eq!(rect_modes(df), [true, true]);
    });
    assert_eq!((data[0], data[4 * 16], data[7 * 16 + 7]), (1, 1, 7));
    assert_eq!(other[0], 1);
    let mut data = vec![0u32; 16 * 16];
    scope_with(Config::blocks(64).unwrap(), |df| {
        let m = df.region(&mut data[..]).matrix(16, 16);
        df.spawn((m.tile(0, 0, 4).inout(),), |_, _| {});
        assert_eq!(rect_modes(df), [false]);
    });
}

fn fp(start: usize, len: usize, rows: usize, ld: usize) -> Footprint {
    Footprint {
        frame: ptr::null(),
        region: 0,
        start,
        len,
        ld,
        rows,
        write: false,
    }
}

#[test]
fn footprint_bytes_are_the_rectangle_or_none() {
    let r = |lo, len, rows, stride| {
        Some(Rect {
            lo,
            len,
            rows,
            stride,
        })
    };
    // 4-byte elements, a region of 100 elements.
    assert_eq!(fp(2, 3, 4, 10).bytes(4, 400), r(8, 12, 4, 40));
    // One row: no stride.
    assert_eq!(fp(2, 3, 1, 10).bytes(4, 400), r(8, 12, 1, 0));
    // Up to the region's last byte, exactly.
    assert_eq!(fp(90, 10, 1, 0).bytes(4, 400), r(360, 40, 1, 0));
    assert_eq!(fp(0, 10, 10, 10).bytes(4, 400), r(0, 40, 10, 40));
    // Empty.
    assert_eq!(fp(5, 0, 3, 10).bytes(4, 400), None);
    assert_eq!(fp(5, 3, 0, 10).bytes(4, 400), None);
    // Zero-sized elements: the region's one byte, whatever the indices.
    assert_eq!(fp(usize::MAX - 1, 7, 9, 3).bytes(0, 0), r(0, 1, 1, 0));
}

#[test]
#[should_panic(expected = "an access outside its region")]
fn a_footprint_one_element_past_the_region_panics() {
    let _ = fp(0, 10, 10, 10).bytes(4, 399);
}

#[test]
#[should_panic(expected = "an access outside its region")]
fn a_footprint_whose_bytes_overflow_panics() {
    // Without checked arithmetic this would wrap to a small end inside the region.
    let _ = fp(2, 1, 2, usize::MAX / 4 + 1).bytes(4, 400);
}
