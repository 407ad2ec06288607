//! SVG pictures of the cost model, drawn with `plotters`' SVG backend:
//! predicted bus bandwidth against size for every legal choice
//! ([`sweep_svg`]), and one rank's records per TOP_SP on the predicted
//! time axis ([`timeline_svg`]). The data comes in plain; this module
//! knows nothing of schedules.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Picture size, pixels.
const SIZE: (u32, u32) = (960, 560);

/// A sweep's picture size, pixels: [`SIZE`] and a column on the right for
/// its legend ([`LEGEND_WIDTH`]), which would otherwise cover the curves.
const SWEEP_SIZE: (u32, u32) = (SIZE.0 + LEGEND_WIDTH, SIZE.1);

/// The legend column of a sweep's picture, pixels.
const LEGEND_WIDTH: u32 = 320;

/// The legend's rows, its font and its samples' length, and its gap from
/// the chart, pixels.
const LEGEND_ROW: i32 = 14;
const LEGEND_FONT: u32 = 10;
const LEGEND_SAMPLE: i32 = 20;
const LEGEND_GAP: i32 = 16;

/// The font size of the labels drawn on a chart (crossovers, bars), pixels.
const LABEL_FONT: u32 = 11;

/// About how wide one character of a [`LABEL_FONT`] sans-serif label is,
/// pixels (a little over the average, so that an estimate is not short):
/// labels are placed so as not to overlap or leave the chart. plotters
/// writes the font at 1/1.24 of its size (`font-size="8.87"` for 11), at
/// which DejaVu Sans averages about 4 pixels a character in Chromium
/// (`ring_all_gather`: 58.6 pixels).
const LABEL_CHAR_WIDTH: f64 = 5.0;

/// The crossover labels' rows, from the bottom of a sweep's busbw axis up:
/// a label that would overlap the one before it in a row goes a row up.
const CROSSOVER_ROWS: i32 = 6;

/// How far apart two crossover label rows are, as a fraction of the busbw
/// axis's log span.
const CROSSOVER_ROW_STEP: f64 = 1.0 / 22.0;

/// The estimated width of `text` as a label, pixels.
fn label_width(text: &str) -> f64 {
    text.chars().count() as f64 * LABEL_CHAR_WIDTH
}

/// A drawing that failed (plotters' message).
#[derive(Debug, thiserror::Error)]
#[error("cannot draw the picture: {0}")]
pub struct PlotError(String);

fn err<E: std::fmt::Debug>(e: E) -> PlotError {
    PlotError(format!("{e:?}"))
}

/// Refuses the first of `values` (each named by `what`) that is not a
/// finite number, or whose axis (the value times `margin`, the room the
/// picture leaves past it) is not: plotters, given an infinite range,
/// never returns.
fn finite(what: &str, margin: f64, values: impl IntoIterator<Item = f64>) -> Result<(), PlotError> {
    match values.into_iter().find(|v| !(v * margin).is_finite()) {
        Some(v) => Err(PlotError(format!("{what} {v:e} is not a finite number the axis can hold"))),
        None => Ok(()),
    }
}

/// Refuses a log axis from `lo` to `hi` whose span (`hi / lo`) is not a
/// finite number: plotters, given one, never returns (`1e-300` to `1e300`).
fn log_span(what: &str, lo: f64, hi: f64) -> Result<(), PlotError> {
    match (hi / lo).is_finite() {
        true => Ok(()),
        false => {
            Err(PlotError(format!("{what} span {lo:e} to {hi:e}: more orders of magnitude than an axis can hold")))
        }
    }
}

/// The chart both pictures draw on: a caption, margins, label areas.
fn builder<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
    title: &str,
    y_label_area: u32,
) -> ChartBuilder<'a, 'b, SVGBackend<'b>> {
    let mut b = ChartBuilder::on(root);
    b.caption(title, ("sans-serif", 18)).margin(12).x_label_area_size(40).y_label_area_size(y_label_area);
    b
}

/// One curve of a sweep: a legal choice's predicted busbw per size.
#[derive(Clone, Debug)]
pub struct Curve {
    /// The choice, as printed (`Ring`, `Hier(...)`).
    pub name: String,
    /// (size in bytes, busbw in GB/s), sizes ascending.
    pub points: Vec<(f64, f64)>,
}

/// A size at which the chosen algorithm changes.
#[derive(Clone, Debug)]
pub struct Crossover {
    /// The first size of the new choice, bytes.
    pub size: f64,
    /// What it changes to.
    pub to: String,
}

/// Sizes for axis labels: `8B`, `4KiB`, `1GiB`, `2TiB`.
pub fn size_label(bytes: f64) -> String {
    const UNITS: [(&str, f64); 5] =
        [("TiB", 1099511627776.0), ("GiB", 1073741824.0), ("MiB", 1048576.0), ("KiB", 1024.0), ("B", 1.0)];
    let (unit, scale) = UNITS.iter().copied().find(|&(_, s)| bytes >= s).unwrap_or(("B", 1.0));
    let v = bytes / scale;
    if (v - v.round()).abs() < 1e-9 { format!("{}{unit}", v.round()) } else { format!("{v:.1}{unit}") }
}

/// A size tick of the log axis, which falls on powers of ten: in decimal
/// units (`10B`, `1kB`, `100MB`), so that no tick reads `9.8KiB` beside
/// `1000B`.
fn size_tick(bytes: f64) -> String {
    const UNITS: [(&str, f64); 5] = [("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3), ("B", 1.0)];
    let (unit, scale) = UNITS.iter().copied().find(|&(_, s)| bytes >= s).unwrap_or(("B", 1.0));
    let v = bytes / scale;
    if (v - v.round()).abs() < 1e-6 { format!("{}{unit}", v.round()) } else { format!("{v:.1}{unit}") }
}

/// A log-axis tick: whole numbers from 10, two decimals from 0.1, else
/// scientific (`1e-4`).
fn tick(y: f64) -> String {
    if y >= 10.0 {
        format!("{y:.0}")
    } else if y >= 0.1 {
        format!("{y:.2}")
    } else {
        format!("{y:.0e}")
    }
}

/// The colours of curves, in order.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// The colour of curve `i`.
fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Predicted busbw against size: every curve thin, the chosen path thick
/// and black, each crossover a dashed vertical line with its new choice.
/// `measure` names what the curves' values are (`busbw`; `algbw` where
/// busbw is 0 throughout: a group of one rank), for the axis.
///
/// # Errors
///
/// [`PlotError`] when plotters cannot draw (an empty sweep, say), or a
/// value is not a finite number.
pub fn sweep_svg(
    title: &str,
    measure: &str,
    curves: &[Curve],
    chosen: &[(f64, f64)],
    crossovers: &[Crossover],
) -> Result<String, PlotError> {
    let all = curves.iter().flat_map(|c| c.points.iter()).chain(chosen);
    // The busbw axis runs to twice the largest value.
    finite("a size of", 1.0, all.clone().map(|&(x, _)| x).chain(crossovers.iter().map(|c| c.size)))?;
    finite(&format!("a {measure} of"), 2.0, all.clone().map(|&(_, y)| y))?;
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, 0.0f64, 0.0f64);
    for &(x, y) in all {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y1 = y1.max(y);
    }
    if !(x0.is_finite() && x1 > x0) {
        return Err(PlotError("a sweep needs at least two sizes".into()));
    }
    // busbw spans orders of magnitude: a log axis from the smallest
    // positive value.
    let y0 = curves
        .iter()
        .flat_map(|c| c.points.iter())
        .chain(chosen)
        .map(|&(_, y)| y)
        .filter(|&y| y > 0.0)
        .fold(f64::INFINITY, f64::min);
    let y0 = if y0.is_finite() { y0 / 2.0 } else { 1e-6 };
    let y1 = if y1 > y0 { y1 * 2.0 } else { y0 * 10.0 };
    log_span("the sizes", x0, x1)?;
    log_span(&format!("the {measure} values"), y0, y1)?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SWEEP_SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = builder(&root, title, 60)
            .margin_right(LEGEND_WIDTH)
            .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("size (bytes, nccom-test's size; kB = 1000 B)")
            .y_desc(format!("predicted {measure} (GB/s, log)"))
            .y_label_formatter(&|y| tick(*y))
            .x_label_formatter(&|x| size_tick(*x))
            .draw()
            .map_err(err)?;
        // Ten colours, then the same ten dashed, then dotted: no two of
        // thirty curves look alike, in the chart or in the legend.
        let mut legend: Vec<(&str, ShapeStyle, (i32, i32))> = Vec::with_capacity(curves.len() + 1);
        for (i, c) in curves.iter().enumerate() {
            let style = colour(i).stroke_width(2);
            let (dash, gap) = match i / PALETTE.len() {
                0 => (0, 0),
                1 => (8, 4),
                _ => (2, 3),
            };
            match dash {
                0 => chart.draw_series(LineSeries::new(c.points.iter().copied(), style)),
                _ => chart.draw_series(DashedLineSeries::new(c.points.iter().copied(), dash, gap, style)),
            }
            .map_err(err)?;
            legend.push((&c.name, style, (dash, gap)));
        }
        let thick = BLACK.stroke_width(5);
        chart.draw_series(LineSeries::new(chosen.iter().copied(), thick)).map_err(err)?;
        legend.push(("chosen", thick, (0, 0)));
        // Each crossover's label in the lowest row where it overlaps no
        // label before it, right of its line, or left of it where it
        // would leave the chart.
        let right_edge = f64::from(chart.plotting_area().dim_in_pixel().0);
        let mut ends: Vec<f64> = vec![f64::NEG_INFINITY; CROSSOVER_ROWS as usize];
        for x in crossovers {
            // Dashes equal on the log axis: 20 steps of the ratio y1/y0.
            let step = (y1 / y0).powf(1.0 / 40.0);
            let dashes = (0..20).map(|k| {
                let a = y0 * step.powi(2 * k);
                PathElement::new(vec![(x.size, a), (x.size, a * step)], BLACK.stroke_width(1))
            });
            chart.draw_series(dashes).map_err(err)?;
            let text = format!("→ {}", x.to);
            let at = f64::from(chart.backend_coord(&(x.size, y0)).0 - chart.backend_coord(&(x0, y0)).0);
            let width = label_width(&text);
            let leftwards = at + 4.0 + width > right_edge;
            let (from, to) = if leftwards { (at - 4.0 - width, at) } else { (at, at + 4.0 + width) };
            let row = ends.iter().position(|&end| end < from).unwrap_or(ends.len() - 1);
            if let Some(end) = ends.get_mut(row) {
                *end = end.max(to);
            }
            let y = y0 * 1.3 * (y1 / y0).powf(CROSSOVER_ROW_STEP * row as f64);
            let anchor = if leftwards { HPos::Right } else { HPos::Left };
            let style =
                ("sans-serif", LABEL_FONT).into_font().into_text_style(&root).pos(Pos::new(anchor, VPos::Center));
            let dx = if leftwards { -4 } else { 4 };
            let label = EmptyElement::at((x.size, y)) + Text::new(text, (dx, 0), style);
            chart.draw_series(std::iter::once(label)).map_err(err)?;
        }
        // The legend in its own column, right of the chart (drawn on the
        // whole picture: the chart's area clips what lies outside it).
        let (plot_x, plot_y) = chart.plotting_area().get_pixel_range();
        let (x, mut y) = (plot_x.end + LEGEND_GAP, plot_y.start + LEGEND_ROW / 2);
        let font =
            ("sans-serif", LEGEND_FONT).into_font().into_text_style(&root).pos(Pos::new(HPos::Left, VPos::Center));
        for (name, style, (dash, gap)) in legend {
            // The sample: a 20-pixel line, in the curve's dashes.
            let step = if dash == 0 { LEGEND_SAMPLE } else { dash + gap };
            for a in (0..LEGEND_SAMPLE).step_by(usize::try_from(step).unwrap_or(1).max(1)) {
                let b = if dash == 0 { LEGEND_SAMPLE } else { (a + dash).min(LEGEND_SAMPLE) };
                root.draw(&PathElement::new(vec![(x + a, y), (x + b, y)], style)).map_err(err)?;
            }
            root.draw(&Text::new(name.to_owned(), (x + LEGEND_SAMPLE + 6, y), font.clone())).map_err(err)?;
            y += LEGEND_ROW;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// One bar of a timeline: a record's predicted span on one TOP_SP.
#[derive(Clone, Debug)]
pub struct Bar {
    /// The row (a TOP_SP).
    pub row: usize,
    /// Predicted start and end, µs.
    pub start_us: f64,
    /// Predicted end, µs.
    pub end_us: f64,
    /// Drawn on the bar (the phase's pattern).
    pub label: String,
    /// The hover title (phase, steps, bytes, time).
    pub title: String,
    /// Which colour (bars of one phase share one across rows).
    pub colour: usize,
}

/// One rank's records as bars, one row per TOP_SP (`rows` their names),
/// on the predicted time axis; each bar carries a hover title.
///
/// # Errors
///
/// [`PlotError`] when plotters cannot draw, or a time is not a finite
/// number.
pub fn timeline_svg(title: &str, rows: &[String], bars: &[Bar]) -> Result<String, PlotError> {
    finite("a bar's time of", 1.02, bars.iter().flat_map(|b| [b.start_us, b.end_us]))?;
    let end = bars.iter().map(|b| b.end_us).fold(0.0f64, f64::max).max(1e-3) * 1.02;
    let n = rows.len().max(1);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = builder(&root, title, 90).build_cartesian_2d(0.0..end, -0.5..n as f64 - 0.5).map_err(err)?;
        let names = rows.to_vec();
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n + 1)
            .y_label_formatter(&move |y| {
                let i = y.floor() as usize;
                if (y - y.floor() - 0.5).abs() < 0.26 || y.fract() == 0.0 {
                    names.get(i).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .x_desc("predicted time (µs)")
            .draw()
            .map_err(err)?;
        for b in bars {
            let y = b.row as f64;
            let fill = colour(b.colour).mix(0.75).filled();
            chart
                .draw_series(std::iter::once(Rectangle::new([(b.start_us, y - 0.35), (b.end_us, y + 0.35)], fill)))
                .map_err(err)?;
            // The label only where it fits on its bar (the hover title
            // says it wherever): labels of narrow bars ran into each other.
            let wide = f64::from(chart.backend_coord(&(b.end_us, y)).0 - chart.backend_coord(&(b.start_us, y)).0);
            if label_width(&b.label) + 4.0 <= wide {
                chart
                    .draw_series(std::iter::once(Text::new(
                        b.label.clone(),
                        (b.start_us + (b.end_us - b.start_us) * 0.02, y + 0.05),
                        ("sans-serif", LABEL_FONT).into_font(),
                    )))
                    .map_err(err)?;
            }
        }
        root.present().map_err(err)?;
    }
    Ok(with_titles(&svg, bars))
}

/// plotters draws no `<title>`: hover titles are added to the bars it drew,
/// which are the `<rect` elements after the background and the plot area,
/// in drawing order. Only the attribute-free close `/>` of each is changed.
fn with_titles(svg: &str, bars: &[Bar]) -> String {
    let mut out = String::with_capacity(svg.len() + bars.len() * 64);
    let rects: Vec<usize> = svg.match_indices("<rect").map(|(i, _)| i).collect();
    // The bars are the last `bars.len()` rectangles drawn.
    let first_bar = rects.len().saturating_sub(bars.len());
    let mut at = 0;
    for (k, &start) in rects.iter().enumerate().skip(first_bar) {
        let Some(close) = svg.get(start..).and_then(|s| s.find("/>")).map(|c| start + c) else { break };
        let Some(bar) = bars.get(k - first_bar) else { break };
        out.push_str(svg.get(at..close).unwrap_or_default());
        out.push_str("><title>");
        out.push_str(&escape(&bar.title));
        out.push_str("</title></rect>");
        at = close + 2;
    }
    out.push_str(svg.get(at..).unwrap_or_default());
    out
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::{Bar, Crossover, Curve, sweep_svg, timeline_svg};

    fn curve(points: Vec<(f64, f64)>) -> Vec<Curve> {
        vec![Curve { name: "a".into(), points }]
    }

    fn bar(end_us: f64) -> Bar {
        Bar { row: 0, start_us: 0.0, end_us, label: "x".into(), title: "x".into(), colour: 0 }
    }

    /// A value whose axis would not be finite is refused: plotters, given
    /// an infinite range, never returns (each of these hung).
    #[test]
    fn a_value_no_axis_holds_is_refused_not_drawn_forever() {
        for points in [
            vec![(1.0, f64::INFINITY), (2.0, 1.0)],
            vec![(1.0, 1.0), (f64::INFINITY, 1.0)],
            vec![(1.0, f64::MAX), (2.0, 1e-300)],
            vec![(1.0, f64::NAN), (2.0, 1.0)],
        ] {
            let e = sweep_svg("t", "busbw", &curve(points.clone()), &[], &[]).unwrap_err();
            assert!(e.to_string().contains("is not a finite number"), "{points:?}: {e}");
        }
        // Finite values whose log axis spans more than a double holds
        // (these hung too).
        for points in
            [vec![(1.0, 1e300), (2.0, 1e-300)], vec![(1.0, 1e160), (2.0, 1e-160)], vec![(5e-324, 1.0), (2.0, 1.0)]]
        {
            let e = sweep_svg("t", "busbw", &curve(points.clone()), &[], &[]).unwrap_err();
            assert!(e.to_string().contains("more orders of magnitude than an axis can hold"), "{points:?}: {e}");
        }
        // Wide but finite spans draw.
        assert!(sweep_svg("t", "busbw", &curve(vec![(1.0, 1e-100), (1e100, 1e100)]), &[], &[]).is_ok());
        for end in [f64::INFINITY, f64::MAX, f64::NAN] {
            let e = timeline_svg("t", &["a".into()], &[bar(end)]).unwrap_err();
            assert!(e.to_string().contains("a bar's time of"), "{end}: {e}");
        }
        // Finite values draw.
        assert!(sweep_svg("t", "busbw", &curve(vec![(1.0, 1.0), (2.0, 3.0)]), &[], &[]).is_ok());
        assert!(timeline_svg("t", &["a".into()], &[bar(5.0)]).is_ok());
    }

    /// The `<text>` elements of `svg` holding `needle`: their `y` and
    /// `text-anchor` attributes.
    fn texts<'a>(svg: &'a str, needle: &str) -> Vec<(&'a str, &'a str)> {
        let attr = |tag: &'a str, name: &str| {
            tag.split(&format!(" {name}=\"")).nth(1).and_then(|v| v.split('"').next()).unwrap_or("")
        };
        svg.split("<text")
            .skip(1)
            .filter(|t| t.contains(needle))
            .map(|t| (attr(t, "y"), attr(t, "text-anchor")))
            .collect()
    }

    /// Crossover labels close together go to rows of their own (they were
    /// drawn on one baseline, over each other), one that would leave the
    /// chart is drawn left of its line, and every curve is in a legend
    /// beside the chart, not over it.
    #[test]
    fn crossover_labels_neither_overlap_nor_leave_the_chart() {
        let points = vec![(1.0, 1.0), (1e9, 10.0)];
        let curves: Vec<Curve> =
            (0..25).map(|i| Curve { name: format!("curve {i}"), points: points.clone() }).collect();
        let long = |size: f64, to: &str| Crossover { size, to: to.to_owned() };
        let crossovers =
            [long(3e4, "Hier(iRS=Ring, xAR=Ring, iAG=Ring)"), long(1e5, "Hier(iRS=Kangaring)"), long(9e8, "Ring")];
        let svg = sweep_svg("t", "busbw", &curves, &points, &crossovers).unwrap();
        let (first, second) = (texts(&svg, "iRS=Ring"), texts(&svg, "iRS=Kangaring"));
        assert_eq!((first.len(), second.len()), (1, 1), "{svg}");
        assert_ne!(first[0].0, second[0].0, "two labels on one baseline");
        assert_eq!(texts(&svg, "→ Ring")[0].1, "end", "the last label runs left of its line");
        assert_eq!(texts(&svg, "iRS=Ring")[0].1, "start");
        // Every curve in the legend, right of the chart (plotters' own
        // legend lay over it).
        for i in [0, 10, 24] {
            assert_eq!(texts(&svg, &format!(">\ncurve {i}\n<")).len(), 1, "curve {i} in the legend: {svg}");
            let x = svg
                .split("<text")
                .find(|t| t.contains(&format!(">\ncurve {i}\n<")))
                .and_then(|t| t.split(" x=\"").nth(1)?.split('"').next()?.parse::<u32>().ok());
            assert!(x.is_some_and(|x| x > super::SIZE.0), "curve {i} at {x:?}");
        }
    }

    /// A bar's label is drawn only where it fits on the bar; its hover
    /// title is there either way.
    #[test]
    fn a_label_too_wide_for_its_bar_is_left_to_the_title() {
        let wide = Bar { label: "wide enough".into(), title: "the wide one".into(), ..bar(90.0) };
        let narrow = Bar {
            start_us: 90.0,
            end_us: 91.0,
            label: "too narrow".into(),
            title: "the narrow one".into(),
            ..bar(0.0)
        };
        let svg = timeline_svg("t", &["a".into()], &[wide, narrow]).unwrap();
        assert_eq!(texts(&svg, "wide enough").len(), 1, "{svg}");
        assert!(texts(&svg, "too narrow").is_empty(), "{svg}");
        assert!(svg.contains("<title>the narrow one</title>") && svg.contains("<title>the wide one</title>"));
    }
}
