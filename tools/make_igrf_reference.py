"""Write ``tests/data/igrf_reference.csv``: IGRF-14 field values from sources other than ppigrf.

The production code evaluates IGRF-14 with ``ppigrf``. This file holds values that
come from elsewhere. Each row says where it came from in the ``source`` column:

``igrf14syn`` (64 rows, latitude 1.9..89.4 N, 22..977 km, 2000.1..2029.9)
    Output of the official IAGA V-MOD Fortran subroutine ``igrf14syn`` (geodetic input
    ``itype=1``, WGS-84). Published as the test file
    ``test/IGRF14_test_geodetic.txt`` of JuliaSpace/SatelliteToolboxGeomagneticField.jl
    (commit 1e201904286e3da06dd7aee15504a1a2c7ebb61b). The program that wrote it is
    JuliaSpace/IGRF_Test ``igrf_test.f90`` (read in its IGRF-13 form, which writes the
    same format; the 2000 random inputs are drawn by Fortran ``rand()``): each line is
    ``date (decimal year), altitude h [km], colatitude [deg], east longitude [deg],
    X, Y, Z, F [nT]`` with format ``(F9.1 F10.2 F8.2 F9.2 4F15.5)``.
    The rows below are copied verbatim: every line among lines 1-494 of that file with
    2000.0 <= date < 2030.0 and h <= 1000 km. Colatitude is 0..90 deg in that file, so
    these rows cover only latitudes 0..90 N.
    Altitude detail: the generator drew a radius r with 2 decimals and used
    h = r - 6378.137 km, then printed h with 2 decimals. The true input is therefore
    printed h + 0.003 km exactly; ``alt_km`` below carries that exact value.
    Accuracy: the values are exact model output (printed to 1e-5 nT) for the given
    inputs. The date is a decimal year (``date_decimal_year``); ``date_iso`` is that
    decimal year converted with the actual length of the year
    (Jan 1 + frac * 365 or 366 days), the same convention as ppigrf's
    ``yearfrac_to_datetime``. igrf14syn interpolates linearly in decimal years while
    ppigrf interpolates linearly in elapsed time between the 5-year epochs; with this
    conversion the two time conventions differ by up to ~1 day inside a 5-year
    interval, worth up to ~0.15 nT. (Feeding ppigrf the instant that reproduces
    igrf14syn's interpolation fraction brings the agreement to 0.02 nT; dropping the
    +0.003 km altitude correction costs 0.07 nT.)

``noaa_magcalc`` (17 rows, three ground stations, 0.7-2.4 km)
    Values from the NOAA NCEI online calculator (magcalc, IGRF-14 model), as published
    in the test file ``harmonica/tests/test_igrf.py`` of fatiando/harmonica (commit
    07dff3478fbacbeb74f81041a73a7c0d75adce50): Sao Paulo (lat -23.5, lon -43.7, 700 m),
    Ulaanbaatar (47.9, 106.9, 1300 m), Addis Ababa (9.0, 38.7, 2355 m), heights above
    the WGS-84 ellipsoid, dates from 2000 on. Rounded to 0.1 nT by the calculator;
    its conversion of a calendar date to a decimal year is not documented (a 1-day
    shift is <= 0.3 nT here). Expect agreement to ~1 nT. This is the only
    southern-hemisphere published source used here (Sao Paulo).

``pyIGRF14`` (20 rows, latitude -89..-1.6, 48..838 km, 2000.2..2029.0)
    Computed by this script with the PyPI package ``pyIGRF14`` (1.0.4; a pure-Python
    port of the IAGA ``igrfXXsyn`` Fortran subroutine with the IGRF-14 coefficient
    table ``igrf14coeffs.txt``), to cover southern latitudes down to -89 deg that the
    published sets lack. It shares no code with ppigrf. Against the ``igrf14syn`` rows
    it agrees to 0.014 nT (the script prints and asserts the check). Inputs are drawn with a fixed
    seed (latitude in -89..-1, altitude in 0..1000 km, any longitude, a day in
    2000-2029); the decimal year passed to pyIGRF14 follows the same conversion as above.

Columns: ``date_iso`` (UTC), ``date_decimal_year``, ``geodetic_lat_deg`` (WGS-84),
``lon_deg`` (east, -180..180), ``alt_km`` (height above the WGS-84 ellipsoid),
``B_north_nT``, ``B_east_nT``, ``B_down_nT`` (local geodetic NED, i.e. IGRF X, Y, Z),
``source``. Note ppigrf returns (Be, Bn, Bu): B_down = -Bu.

IGRF-14 itself (Alken et al. 2025 / IAGA V-MOD, https://doi.org/10.5281/zenodo.14012302)
is definitive (DGRF) up to 2020, provisional for 2020-2025 and a predictive
secular-variation extrapolation for 2025-2030; these rows test an implementation of
the model, not the model's fit to the real field.

Run: ``/tmp/ref-venv/bin/python tools/make_igrf_reference.py`` (needs numpy and
pyIGRF14; if ppigrf is importable it also prints the differences ppigrf - reference).
"""

from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "igrf_reference.csv"

# Verbatim lines of IGRF14_test_geodetic.txt (see docstring), in file order.
# date  h_km(printed)  colat_deg  elong_deg  X_nT  Y_nT  Z_nT  F_nT
IGRF14SYN_LINES = """
   2012.2     77.18    4.81   190.69      750.03774      394.68103    55395.16588    55401.64919
   2014.2    864.95    8.28   235.41     1182.76234      447.65779    40091.79119    40111.73202
   2022.1    829.10   46.47   114.85    17590.40262    -1731.07191    33147.28408    37565.42714
   2027.9    139.86   45.06   138.29    23759.41728    -4335.97718    42511.80742    48893.39810
   2027.0    101.99   68.54   277.27    24647.90876    -2283.98317    29268.17197    38332.25634
   2011.8    222.44    1.43   247.84     -723.44139    -1045.98675    51636.66448    51652.32400
   2027.9    678.36   11.81   318.83     4233.77763    -1701.12233    41794.33293    42042.65637
   2014.9    484.77   48.37   185.20    19703.94550     2367.64109    29115.12948    35235.52124
   2019.6    861.84   41.70    23.47    14724.38753     1061.14256    30350.70774    33750.54181
   2019.0    725.42   42.08   290.39    12345.20092    -3116.24677    36275.21673    38444.84787
   2009.8    912.80   66.51   113.76    24135.94910     -822.49960    15782.49852    28849.74531
   2011.9     45.78   24.68   231.47     8603.16958     3793.56733    56280.34670    57060.34616
   2010.3     57.19   14.47   254.50     1948.94679       42.75476    56392.31286    56425.99730
   2015.6     68.83   33.98   176.27    19582.39973      543.18508    46322.39044    50294.42598
   2011.1    549.19   20.89   193.15     8786.50541     1870.00271    43737.09958    44650.12281
   2026.7    398.50   37.21   215.09    15269.19369     3812.80476    40196.40883    43167.54613
   2016.7    808.80   33.07   289.77     8664.08676    -2643.38893    38100.89257    39162.88957
   2004.0    295.13   51.52    11.31    23008.70751      276.35917    31193.63347    38762.34983
   2008.4    857.40   77.55    99.79    26855.12189     -452.61409     4871.52274    27297.14573
   2017.4    960.84   35.03   292.28     9007.60102    -2634.49021    34970.75388    36208.16264
   2013.3    490.73   16.31   128.71     5414.61654     -992.85619    47459.77620    47777.96765
   2026.1    964.93   33.21   166.70    12720.22816     -424.83951    32566.46468    34965.11568
   2024.4    333.35   87.10   188.31    27594.53690     4669.21356     1412.69184    28022.41460
   2017.3    729.65   82.62    99.60    28743.35898     -460.45708     -107.47262    28747.24780
   2028.5    209.44   37.44   301.10    14780.42720    -4623.39187    45721.50473    48273.10613
   2029.9    554.55   47.36   192.94    18365.55340     2412.51292    29274.52518    34642.62684
   2027.1    976.62   11.34    88.91     2573.10979      697.17206    38903.01330    38994.24812
   2019.7    335.74   14.67   300.96     4190.05286    -2818.45058    48308.53486    48571.74844
   2000.5    469.05   39.84    63.51    16370.61973     2095.47226    40464.01254    43700.39480
   2020.9    717.06   61.97    73.14    24211.79873      357.81216    22840.59828    33287.11699
   2028.7    784.98   11.44   346.12     4881.36864     -670.08423    39847.27562    40150.74279
   2015.7    369.72    0.63   281.69       36.69265    -1392.96459    48605.28127    48625.25130
   2022.6    338.50   10.27   284.81     2296.96085    -1810.19075    48874.33827    48961.75815
   2006.0    651.38   65.70   299.36    19012.66354    -4701.64201    23076.77909    30267.54939
   2018.5    229.23   30.91   339.14    14016.12288    -2630.59265    44092.21387    46341.07296
   2015.4    525.23   54.76    45.33    22193.70993     1532.66691    28988.18881    36540.72959
   2012.0    247.75   72.11    81.90    34568.75037     -582.83251    15290.76364    37804.04276
   2012.6    403.01   64.52   212.29    22123.47211     4303.85844    22103.33469    31567.84155
   2013.4    739.81   57.79   249.81    17106.34937     2667.30694    28850.61727    33646.69125
   2010.1    770.99   17.43   144.56     6364.88307     -797.39072    41412.76076    41906.61430
   2025.6    769.39   34.06   186.33    13707.48134     1229.10986    34340.24473    36995.38031
   2009.8    461.65   64.60   147.11    26403.85148     -513.43080    17673.03673    31776.77157
   2007.8     22.30   56.50   124.72    31620.55412    -3493.11484    36683.01698    48556.20485
   2015.8    242.66   35.92   139.29    17847.12070    -3607.33824    46296.92398    49748.74648
   2014.3    111.68   41.12   275.59    14510.37489    -2020.20951    51493.95946    53537.46433
   2000.1    581.51   71.69    71.64    28408.86217     -601.96121    12536.76795    31057.95161
   2018.3    553.18   13.09   267.87     2192.36373     -832.44405    45176.70062    45237.52536
   2017.7    872.84   87.71    21.69    20365.80814     -186.48767    -6040.12552    21243.44687
   2017.4     73.60   46.66   135.16    25299.09024    -4464.28262    43095.22128    50171.42497
   2021.0    901.03    7.63   279.71     1302.76215    -1013.85498    39186.40819    39221.16365
   2023.1    295.82   73.38   101.82    34663.65242     -645.59222    14086.24397    37422.02370
   2024.4    197.74   49.05    26.29    22741.35682     2108.47878    36835.20543    43341.05850
   2000.7    926.96   49.89    96.69    18519.49055     -142.98619    29517.54893    34846.48720
   2006.5    167.05   14.40    88.93     3953.92660     1768.57170    54560.00738    54731.67079
   2002.8    849.17   35.26   312.48    10375.52846    -3878.95664    35016.11746    36726.37169
   2005.7     30.15    7.81    21.31     5516.65881      859.62738    54419.57084    54705.22986
   2025.1    365.31   70.32    91.32    32686.57992     -438.71103    17847.05145    37244.08973
   2004.7    749.03   37.68   229.08    11900.04308     3931.67723    37129.91360    39188.00320
   2005.3    310.51   10.80   283.57     1382.88888    -2181.10685    49634.59774    49701.73942
   2007.8    625.35   22.21   298.33     5461.15586    -3160.43874    42716.21464    43179.71271
   2018.8    346.60   19.51   263.74     4030.12862     -410.92687    49554.37543    49719.68345
   2002.7    371.66   37.82    97.45    16162.12476      155.06206    47042.69153    49741.86514
   2003.8    148.17   68.64    17.38    31667.70198      469.34516    15216.65280    35137.01974
   2001.9    802.20   88.07   127.89    26471.92429      647.84539    -6354.97106    27231.74868
"""

# NOAA magcalc values as published in fatiando/harmonica harmonica/tests/test_igrf.py.
# (station, lat_deg, lon_deg, height_m): [(date, B_north, B_east, B_down) nT]
NOAA_MAGCALC = {
    ("Sao Paulo", -23.5, -43.7, 700.0): [
        ("2000-01-01", 17920.6, -6805.0, -13345.2),
        ("2004-01-01", 17583.2, -6796.2, -13673.6),
        ("2008-01-01", 17238.8, -6795.2, -14022.9),
        ("2012-01-01", 16868.0, -6783.9, -14390.2),
        ("2016-01-01", 16474.6, -6750.7, -14779.5),
        ("2020-01-01", 16085.4, -6690.6, -15201.8),
        ("2024-01-01", 15700.2, -6573.2, -15568.5),
    ],
    ("Ulaanbaatar", 47.9, 106.9, 1300.0): [
        ("2002-06-01", 22368.6, -1442.9, 54507.3),
        ("2008-05-31", 22214.7, -1605.3, 54565.2),
        ("2014-06-01", 21932.5, -1721.0, 54756.3),
        ("2020-05-31", 21677.4, -1940.8, 55078.8),
        ("2026-06-01", 21568.1, -2104.8, 55327.5),
    ],
    ("Addis Ababa", 9.0, 38.7, 2355.0): [
        ("2004-08-02", 35393.7, 980.7, 754.7),
        ("2010-02-01", 35471.2, 1181.1, 1068.0),
        ("2015-08-02", 35531.8, 1342.4, 1396.4),
        ("2021-02-01", 35605.6, 1421.6, 1788.7),
        ("2026-08-02", 35675.0, 1368.9, 2067.7),
    ],
}

PYIGRF_SEED = 20250614
PYIGRF_N_RANDOM = 18
# Fixed extra southern points: near the south pole, and the South Atlantic Anomaly.
PYIGRF_FIXED = [
    ("2021-03-21T00:00:00", -89.0, 0.0, 500.0),
    ("2024-09-01T00:00:00", -26.0, -50.0, 500.0),
]


def days_in_year(year: int) -> int:
    return 366 if (year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)) else 365


def decimal_year_to_datetime(y: float) -> dt.datetime:
    year = int(np.floor(y))
    seconds = round((y - year) * days_in_year(year) * 86400.0)
    return dt.datetime(year, 1, 1) + dt.timedelta(seconds=seconds)


def datetime_to_decimal_year(t: dt.datetime) -> float:
    start = dt.datetime(t.year, 1, 1)
    return t.year + (t - start).total_seconds() / (days_in_year(t.year) * 86400.0)


def igrf14syn_rows():
    rows = []
    for line in IGRF14SYN_LINES.strip().splitlines():
        date, h, colat, elong, x, y, z, f = map(float, line.split())
        assert 2000.0 <= date < 2030.0 and h <= 1000.0
        # consistency of the copy: F must equal |(X, Y, Z)| to the printed precision
        assert abs(np.sqrt(x * x + y * y + z * z) - f) < 2e-5, line
        lon = elong - 360.0 if elong > 180.0 else elong
        rows.append(dict(
            date_iso=decimal_year_to_datetime(date).isoformat(),
            date_decimal_year=date,
            geodetic_lat_deg=round(90.0 - colat, 2),
            lon_deg=round(lon, 2),
            alt_km=round(h + 0.003, 3),
            B_north_nT=x, B_east_nT=y, B_down_nT=z,
            source="igrf14syn",
        ))
    return rows


def noaa_rows():
    rows = []
    for (_, lat, lon, h_m), values in NOAA_MAGCALC.items():
        for date, bn, be, bd in values:
            t = dt.datetime.fromisoformat(date)
            rows.append(dict(
                date_iso=t.isoformat(), date_decimal_year=round(datetime_to_decimal_year(t), 6),
                geodetic_lat_deg=lat, lon_deg=lon, alt_km=h_m / 1000.0,
                B_north_nT=bn, B_east_nT=be, B_down_nT=bd, source="noaa_magcalc",
            ))
    return rows


def pyigrf_inputs():
    rng = np.random.default_rng(PYIGRF_SEED)
    t0 = dt.datetime(2000, 1, 1)
    span_days = (dt.datetime(2029, 12, 31) - t0).days
    pts = list(PYIGRF_FIXED)
    for _ in range(PYIGRF_N_RANDOM):
        t = t0 + dt.timedelta(days=int(rng.integers(0, span_days + 1)), hours=int(rng.integers(0, 24)))
        lat = round(float(rng.uniform(-89.0, -1.0)), 2)
        lon = round(float(rng.uniform(-180.0, 180.0)), 2)
        alt = round(float(rng.uniform(0.0, 1000.0)), 3)
        pts.append((t.isoformat(), lat, lon, alt))
    return pts


def pyigrf_rows():
    import pyIGRF14

    rows = []
    for date, lat, lon, alt in pyigrf_inputs():
        y = datetime_to_decimal_year(dt.datetime.fromisoformat(date))
        _, _, _, x, yy, z, _ = pyIGRF14.igrf_value(lat, lon, alt, y)
        rows.append(dict(
            date_iso=date, date_decimal_year=round(y, 6), geodetic_lat_deg=lat, lon_deg=lon,
            alt_km=alt, B_north_nT=round(x, 5), B_east_nT=round(yy, 5), B_down_nT=round(z, 5),
            source="pyIGRF14",
        ))
    return rows


def check_pyigrf_against_igrf14syn(rows):
    import pyIGRF14

    worst = 0.0
    for r in rows:
        _, _, _, x, y, z, _ = pyIGRF14.igrf_value(r["geodetic_lat_deg"], r["lon_deg"], r["alt_km"],
                                                   r["date_decimal_year"])
        worst = max(worst, abs(x - r["B_north_nT"]), abs(y - r["B_east_nT"]), abs(z - r["B_down_nT"]))
    print(f"check: pyIGRF14 vs igrf14syn rows, max |diff| = {worst:.4f} nT")
    assert worst < 0.05, "pyIGRF14 does not reproduce the published igrf14syn values"


def compare_with_ppigrf(rows):
    try:
        import ppigrf
    except ImportError:
        print("ppigrf not importable; skipping the comparison")
        return
    by_source = {}
    for r in rows:
        t = dt.datetime.fromisoformat(r["date_iso"])
        be, bn, bu = ppigrf.igrf(r["lon_deg"], r["geodetic_lat_deg"], r["alt_km"], t)
        d = np.array([float(np.ravel(bn)[0]) - r["B_north_nT"], float(np.ravel(be)[0]) - r["B_east_nT"],
                      -float(np.ravel(bu)[0]) - r["B_down_nT"]])
        by_source.setdefault(r["source"], []).append(d)
    from importlib.metadata import version

    ver = version("ppigrf")
    for src, ds in by_source.items():
        ds = np.abs(np.array(ds))
        print(f"ppigrf {ver} - {src:13s} ({len(ds):2d} rows): max |dN|={ds[:, 0].max():.3f} "
              f"|dE|={ds[:, 1].max():.3f} |dD|={ds[:, 2].max():.3f} nT, "
              f"max |dB|={np.linalg.norm(ds, axis=1).max():.3f} nT")


def main():
    syn = igrf14syn_rows()
    check_pyigrf_against_igrf14syn(syn)
    rows = syn + noaa_rows() + pyigrf_rows()
    cols = ["date_iso", "date_decimal_year", "geodetic_lat_deg", "lon_deg", "alt_km",
            "B_north_nT", "B_east_nT", "B_down_nT", "source"]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: r[k] for k in cols})
    counts = {s: sum(r["source"] == s for r in rows) for s in ("igrf14syn", "noaa_magcalc", "pyIGRF14")}
    print(f"wrote {OUT} ({len(rows)} rows: {counts}; {OUT.stat().st_size} bytes)")
    compare_with_ppigrf(rows)


if __name__ == "__main__":
    main()
