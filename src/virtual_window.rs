//! Which rows of a long list to put in the DOM (pure; the transcript's virtualization).

use std::collections::HashMap;

/// The slice of rows to render and the space to leave above and below it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Window {
    /// First row to render.
    pub start: usize,
    /// One past the last row to render.
    pub end: usize,
    /// Height of the rows above `start`.
    pub pad_top: f64,
    /// Height of the rows from `end` on.
    pub pad_bottom: f64,
    /// Height of all rows.
    pub total: f64,
}

/// Most rows ever rendered at once (bounds the DOM whatever the measurements say).
pub const MAX_ROWS: usize = 120;

/// Rows whose box intersects `[scroll_top - overscan, scroll_top + viewport + overscan]`, using
/// measured heights where known and `default_h` elsewhere.
pub fn compute(
    keys: &[String],
    heights: &HashMap<String, f64>,
    default_h: f64,
    scroll_top: f64,
    viewport: f64,
    overscan: f64,
) -> Window {
    let lo = (scroll_top - overscan).max(0.0);
    let hi = scroll_top + viewport + overscan;
    let mut y = 0.0;
    let mut start = None;
    let mut end = keys.len();
    let mut pad_top = 0.0;
    let mut end_y = 0.0;
    for (i, k) in keys.iter().enumerate() {
        let h = heights.get(k).copied().unwrap_or(default_h).max(1.0);
        if start.is_none() && y + h > lo {
            start = Some(i);
            pad_top = y;
        }
        if start.is_some() && (y >= hi || i - start.unwrap_or(i) >= MAX_ROWS) && end == keys.len() {
            end = i;
            end_y = y;
        }
        y += h;
    }
    let Some(start) = start else {
        // Scrolled past everything (e.g. rows shrank): show the tail.
        let start = keys.len().saturating_sub(1);
        let mut top = 0.0;
        for k in &keys[..start] {
            top += heights.get(k).copied().unwrap_or(default_h).max(1.0);
        }
        return Window {
            start,
            end: keys.len(),
            pad_top: top,
            pad_bottom: 0.0,
            total: y,
        };
    };
    if end == keys.len() {
        end_y = y;
    }
    Window {
        start,
        end,
        pad_top,
        pad_bottom: (y - end_y).max(0.0),
        total: y,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("k{i}")).collect()
    }

    #[test]
    fn renders_only_what_is_near_the_viewport() {
        let k = keys(10_000);
        let h = HashMap::new();
        let w = compute(&k, &h, 50.0, 100_000.0, 800.0, 400.0);
        assert_eq!(w.total, 500_000.0);
        assert_eq!(w.start, (100_000 - 400) / 50);
        assert_eq!(w.end, (100_000 + 800 + 400) / 50);
        assert_eq!(w.pad_top, w.start as f64 * 50.0);
        assert_eq!(
            w.pad_top + (w.end - w.start) as f64 * 50.0 + w.pad_bottom,
            w.total
        );
    }

    #[test]
    fn uses_measured_heights_and_caps_rows() {
        let k = keys(1000);
        let mut h = HashMap::new();
        h.insert("k0".to_string(), 1000.0);
        let w = compute(&k, &h, 2.0, 0.0, 5000.0, 0.0);
        assert_eq!(w.start, 0);
        assert!(w.end - w.start <= MAX_ROWS + 1);
        let w = compute(&k, &h, 10.0, 1005.0, 20.0, 0.0);
        assert_eq!(w.start, 1);
        assert_eq!(w.pad_top, 1000.0);
    }

    #[test]
    fn empty_and_scrolled_past_the_end() {
        assert_eq!(
            compute(&[], &HashMap::new(), 50.0, 0.0, 800.0, 100.0),
            Window::default()
        );
        let k = keys(3);
        let w = compute(&k, &HashMap::new(), 50.0, 10_000.0, 800.0, 100.0);
        assert_eq!((w.start, w.end), (2, 3));
        assert_eq!(w.pad_top + 50.0, w.total);
    }
}
